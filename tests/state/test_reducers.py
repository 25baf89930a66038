"""Reducers: each is pure and batching-invariant where DeltaChannel needs it."""

from __future__ import annotations

import copy
import pickle
from unittest.mock import patch

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

from noema_graph.state.channels import Delta, Folded
from noema_graph.state.models import ReasoningStep, Usage
from noema_graph.state.reducers import (
    History,
    add_seconds,
    add_usage,
    append_steps,
    merge_messages,
)


def test_merge_messages_appends_and_replaces_by_id() -> None:
    first = [HumanMessage("a", id="1")]
    merged = merge_messages(first, [[AIMessage("b", id="2")], [AIMessage("B", id="2")]])
    assert [m.content for m in merged] == ["a", "B"]
    assert first == [HumanMessage("a", id="1")]  # input untouched


def test_merge_messages_is_batching_invariant() -> None:
    xs = [[HumanMessage("a", id="1")], [AIMessage("b", id="2")]]
    ys = [[AIMessage("c", id="3")], [AIMessage("B", id="2")]]
    assert merge_messages(merge_messages([], xs), ys) == merge_messages([], xs + ys)


def test_append_steps_numbers_by_position() -> None:
    steps = append_steps(
        [], [[ReasoningStep(thought="a")], [ReasoningStep(thought="b"), ReasoningStep(thought="c")]]
    )
    assert [(s.step, s.thought) for s in steps] == [(1, "a"), (2, "b"), (3, "c")]
    xs = [[ReasoningStep(thought="a")]]
    ys = [[ReasoningStep(thought="b")]]
    assert [s.step for s in append_steps(append_steps([], xs), ys)] == [
        s.step for s in append_steps([], xs + ys)
    ]


def test_add_usage_sums_and_unknown_cost_stays_unknown() -> None:
    total = add_usage(
        None, Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3, cost_usd=0.1)
    )
    total = add_usage(total, Usage(prompt_tokens=1, total_tokens=1, cost_usd=0.2))
    assert (total.prompt_tokens, total.total_tokens) == (2, 4)
    assert total.cost_usd is not None and abs(total.cost_usd - 0.3) < 1e-9
    assert add_usage(total, Usage(cost_usd=None)).cost_usd is None
    assert add_usage(total, None) == total


def test_add_seconds() -> None:
    assert add_seconds(None, 1.5) == 1.5
    assert add_seconds(1.0, None) == 1.0


def test_merge_messages_gives_stable_ids_to_id_less_messages() -> None:
    writes = [[("user", "hi")], [AIMessage("a")]]
    first, second = merge_messages([], writes), merge_messages([], writes)
    assert [m.id for m in first] == [m.id for m in second]
    assert all(m.id for m in first)
    same_text_later = merge_messages(first, [[("user", "hi")]])
    assert len({m.id for m in same_text_later}) == 3  # same content, another position


# -- what a reducer returned is trusted by the next fold, and only while it is unchanged ------

WRITES = [
    [[AIMessage("b", id="2")]],
    [[AIMessage("B", id="2")]],  # replaces by id
    [[RemoveMessage(id="1")]],
    [[AIMessage("c", id="3"), AIMessage("C", id="3")]],  # one write replacing its own message
    [[("user", "plain tuple")]],
]


def test_a_fold_into_its_own_result_equals_a_fold_into_a_plain_list() -> None:
    history = merge_messages([], [[HumanMessage("a", id="1")]])
    plain = list(history)
    for write in WRITES:
        history, plain = merge_messages(history, write), merge_messages(plain, write)
        assert isinstance(history, History) and history.checked()
        assert history == plain
        assert history.ids == {m.id for m in history}


def test_a_history_changed_in_place_is_checked_again() -> None:
    history = merge_messages([], [[HumanMessage("a", id="1")]])
    history.append(AIMessage("x", id="9"))  # not through the reducer: its ids are stale
    assert not history.checked()
    merged = merge_messages(history, [[AIMessage("X", id="9")]])
    assert [m.content for m in merged] == ["a", "X"]  # replaced by id, not appended
    steps = append_steps([], [[ReasoningStep(thought="a")]])
    steps.append({"thought": "a dict put there in place"})  # type: ignore[arg-type]
    trace = append_steps(steps, [[ReasoningStep(thought="b")]])
    assert all(isinstance(s, ReasoningStep) for s in trace)  # the dict validated back
    assert [s.step for s in trace] == [1, 0, 3]


def test_a_copy_keeps_what_is_known_and_is_a_list_of_its_own() -> None:
    history = merge_messages([], [[HumanMessage("a", id="1")]])
    twin = copy.copy(history)
    assert isinstance(twin, History) and twin.checked() and twin.ids == history.ids
    twin.append(AIMessage("b", id="2"))
    assert len(history) == 1 and not twin.checked()


# -- channels: copies share the value and never build an empty one -----------------------


def test_folded_copies_share_the_value_and_skip_the_constructor() -> None:
    channel = Folded(Usage, add_usage).from_checkpoint(Usage(total_tokens=5))
    channel.key = "usage"
    with patch.object(Usage, "__init__", side_effect=AssertionError("built an empty Usage")):
        twin = channel.copy()
    assert twin.key == "usage" and twin.get() is channel.get()
    assert twin.update([Usage(total_tokens=1)])
    assert (channel.get().total_tokens, twin.get().total_tokens) == (5, 6)


def test_delta_copies_share_the_value_and_updates_stay_apart() -> None:
    channel = Delta(merge_messages, list).from_checkpoint([HumanMessage("a", id="1")])
    twin = channel.copy()
    assert twin.get() is channel.get()
    assert twin.update([[AIMessage("b", id="2")]])
    assert [m.id for m in channel.get()] == ["1"] and [m.id for m in twin.get()] == ["1", "2"]


def test_a_history_pickles_and_deep_copies_as_itself() -> None:
    history = merge_messages([], [[HumanMessage("a", id="1")]])
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(history, protocol=protocol))
        assert type(back) is History and back == history and back.checked(), protocol
        assert back.ids == {"1"}
    deep = copy.deepcopy(history)
    assert deep == history and deep.ids == history.ids and deep[0] is not history[0]
