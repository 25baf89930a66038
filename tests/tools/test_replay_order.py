"""Dependent tool calls of one message keep their order: BFCL tasks replayed through the graph.

Each task has a turn whose calls depend on each other (``cd`` then ``mv``, ``ticket_login``
then ``create_ticket``, ``register_credit_card`` then ``purchase_insurance``, three
``add_to_watchlist`` that build a list). The backends are BFCL's own stateful ones. Each call
waits before it acts, the later in its message the shorter: calls run one after another are
unaffected, calls run concurrently act in reverse order, so a lost order shows every time
instead of by chance.
"""

from __future__ import annotations

import pytest

from tests import replay
from tests.replay import (
    end_state,
    load_tasks,
    replay_direct,
    reverse_delay,
    state_diff,
)

TASKS = {task.id: task for task in load_tasks()}
DEPENDENT = ["multi_turn_base_0", "multi_turn_base_64", "multi_turn_base_105"]
DEPENDENT += ["multi_turn_base_152", "multi_turn_base_197"]
STEP_S = 0.02


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("task_id", DEPENDENT)
def test_one_call_per_message_reaches_the_gold_end_state(task_id: str, use_async: bool) -> None:
    task = TASKS[task_id]
    assert state_diff(task, "sequential", delay=reverse_delay(STEP_S), use_async=use_async) == {}


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("task_id", DEPENDENT)
def test_a_turn_in_one_message_reaches_the_gold_end_state(task_id: str, use_async: bool) -> None:
    task = TASKS[task_id]
    assert state_diff(task, "batched", delay=reverse_delay(STEP_S), use_async=use_async) == {}


def test_the_direct_replay_is_deterministic_and_read_only_methods_change_nothing() -> None:
    # replay_direct raises when a method declared concurrency-safe (READ_ONLY) changed state
    for task in TASKS.values():
        assert end_state(replay_direct(task)) == end_state(replay_direct(task)), task.id


def test_a_mutating_method_declared_read_only_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "READ_ONLY", replay.READ_ONLY | {"mkdir"})
    with pytest.raises(AssertionError, match="mkdir is listed read-only but changed state"):
        replay_direct(TASKS["multi_turn_base_0"])
