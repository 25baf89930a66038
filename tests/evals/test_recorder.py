"""Trajectories from states and checkpointed threads, JSON round trip, and offline replay."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.evals import ReplayExhausted, Trajectory, TrajectoryRecorder
from noema_graph.evals.replay import ReplayChatModel, Script
from noema_graph.persistence import sqlite_checkpointer
from noema_graph.state.models import Reflection
from tests.agents.conftest import tutor_consults_calibration
from tests.evals.conftest import run_turn
from tests.scripted import call, plan_reply, reflection_reply, structured, text, tools_reply

NEW = [
    {"front": "Which gas makes up most of Earth's air?", "back": "Nitrogen"},
    {"kind": "cloze", "front": "{{c1::Oxygen}} is about 21% of air.", "back": "Oxygen"},
]


def _content_script() -> list[Any]:
    return [
        plan_reply("Check for duplicates", "Create the cards", goal="Two cards on air"),
        tools_reply(call("search_cards", {"query": "nitrogen"}), content="Look first."),
        text("no duplicates"),
        tools_reply(call("create_cards", {"deck_id": 2, "cards": NEW})),
        reflection_reply("continue", reason="cards written"),
        text("created two cards"),
        structured("GeneratedCards", deck_id=2, card_ids=[209, 210], summary="Air gases."),
    ]


def _calls(trajectory: Trajectory) -> list[tuple[str, Any]]:
    return [(c.tool, c.input) for c in trajectory.tool_calls()]


def _cards(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, deck_id, front, back FROM cards WHERE id > 208").fetchall()


def test_from_state_records_steps_output_and_usage(
    scripted: Any, fresh_store: Callable[[str], Path]
) -> None:
    state = run_turn(
        "content_generation", scripted(*_content_script()), fresh_store("a"),
        "Two cards on air, deck 2.", checkpointer=InMemorySaver(),
    )  # fmt: skip
    trajectory = TrajectoryRecorder.from_state(state)
    assert trajectory.input.startswith("Two cards on air, deck 2.")
    assert trajectory.final_output == {
        "deck_id": 2,
        "card_ids": [209, 210],
        "summary": "Air gases.",
    }
    assert _calls(trajectory) == [
        ("search_cards", {"query": "nitrogen"}),
        ("create_cards", {"deck_id": 2, "cards": NEW}),
    ]
    kinds = trajectory.metadata["step_kinds"]
    assert kinds == ["plan", "tool", "thought", "tool", "reflection", "thought"]
    create = trajectory.steps[kinds.index("tool", 2)]
    assert '"card_ids": [209, 210]' in (create.observation or "") and create.error is None
    assert create.started_at is not None and create.ended_at is not None
    assert create.started_at <= create.ended_at
    assert trajectory.usage.total_tokens == 7 * 15 and trajectory.usage.cost_usd
    assert trajectory.metadata["agent"] == "content_generation"
    assert trajectory.metadata["success"] is True
    assert TrajectoryRecorder.from_json(TrajectoryRecorder.to_json(trajectory)) == trajectory
    # each call knows the model message that made it: two messages, one call each
    indexes = [s.message_index for s in trajectory.steps if s.action is not None]
    assert None not in indexes and len(set(indexes)) == 2
    assert [[c.tool for c in m] for m in trajectory.message_calls()] == [
        ["search_cards"],
        ["create_cards"],
    ]


def test_a_failed_call_records_its_error(scripted: Any, fresh_store: Callable[[str], Path]) -> None:
    model = scripted(
        plan_reply("Create"),
        tools_reply(call("create_cards", {"deck_id": 99, "cards": NEW[:1]})),
        text("no such deck"),
        structured("GeneratedCards", deck_id=99, card_ids=[], summary="None."),
    )
    state = run_turn(
        "content_generation", model, fresh_store("b"), "x", checkpointer=None, read=False
    )
    (failed,) = [s for s in TrajectoryRecorder.from_state(state).steps if s.action]
    assert failed.error is not None and "deck_id" in failed.error


def test_from_thread_gives_one_trajectory_per_turn_or_the_whole_thread(
    scripted: Any, fresh_store: Callable[[str], Path], tmp_path: Path
) -> None:
    turn = {"concept": "Valence electrons", "hint": "Count them.", "understanding": "partial"}
    model = scripted(
        plan_reply("Ask a first question"),
        tools_reply(call("search_cards", {"query": "noble"})),
        text("asked about shells"),
        structured("SocraticTurn", question="What fills neon's outer shell?", **turn),
        plan_reply("Ask a follow-up"),
        text("asked a follow-up"),
        structured("SocraticTurn", question="So why would neon not react?", **turn),
    )
    db, runs = fresh_store("c"), tmp_path / "runs.sqlite"
    with sqlite_checkpointer(runs) as saver:
        for request in ("Why are noble gases inert?", "Is it about electrons?"):
            run_turn("socratic_tutor", model, db, request, checkpointer=saver)
    with sqlite_checkpointer(runs) as saver:  # a new process would do the same
        first, second = TrajectoryRecorder.from_thread(saver, "t1")
        (whole,) = TrajectoryRecorder.from_thread(saver, "t1", turns="whole")
    assert first.input.startswith("Why are noble gases") and _calls(first) == [
        ("search_cards", {"query": "noble"})
    ]
    assert second.input.startswith("Is it about electrons?") and _calls(second) == []
    assert second.final_output["question"] == "So why would neon not react?"
    assert whole.metadata["turns"] == 2 and len(whole.steps) == len(first.steps) + len(second.steps)
    assert whole.usage.total_tokens == first.usage.total_tokens + second.usage.total_tokens
    assert whole.final_output == second.final_output


def test_replay_rebuilds_the_run_offline(scripted: Any, fresh_store: Callable[[str], Path]) -> None:
    recorded_db, replay_db = fresh_store("rec"), fresh_store("rep")
    state = run_turn(
        "content_generation", scripted(*_content_script()), recorded_db,
        "Write two cards on air into deck 2.", checkpointer=InMemorySaver(),
    )  # fmt: skip
    recorded = TrajectoryRecorder.from_json(TrajectoryRecorder.from_state(state).to_json())
    model = TrajectoryRecorder.replay(recorded)
    again = run_turn(
        "content_generation",
        model,
        replay_db,
        "Write two cards on air into deck 2.",
        checkpointer=InMemorySaver(),
    )
    replayed = TrajectoryRecorder.from_state(again)
    assert _calls(replayed) == _calls(recorded)
    assert replayed.final_output == recorded.final_output
    assert replayed.metadata["step_kinds"] == recorded.metadata["step_kinds"]
    assert _cards(replay_db) == _cards(recorded_db) != []
    assert isinstance(model, ReplayChatModel) and model.unused() == 0


def test_replay_rebuilds_a_subagent_consultation(
    scripted: Any, fresh_store: Callable[[str], Path]
) -> None:
    state = run_turn(
        "socratic_tutor", scripted(*tutor_consults_calibration()), fresh_store("s1"), "Help me.",
        checkpointer=InMemorySaver(),
    )  # fmt: skip
    recorded = TrajectoryRecorder.from_state(state)
    again = run_turn(
        "socratic_tutor", TrajectoryRecorder.replay(recorded), fresh_store("s2"), "Help me.",
        checkpointer=InMemorySaver(),
    )  # fmt: skip
    replayed = TrajectoryRecorder.from_state(again)
    assert (
        _calls(replayed)
        == _calls(recorded)
        == [("consult_calibration", {"question": "Calibrate user_id 1."})]
    )
    child = replayed.metadata["subagent_outputs"]["1"]
    assert child["result"] == recorded.metadata["subagent_outputs"]["1"]["result"]
    assert replayed.final_output == recorded.final_output


def test_replay_raises_when_the_run_asks_for_more_than_was_recorded() -> None:
    model = ReplayChatModel(script=Script(final={"a": 1}))
    with pytest.raises(ReplayExhausted, match="reflection"):
        model.with_structured_output(Reflection).invoke("how is it going?")


def test_a_refusal_records_the_candidates_it_read_from_the_store(
    scripted: Any, fresh_store: Callable[[str], Path]
) -> None:
    state = run_turn(
        "taxonomy_curator", scripted(metadata={"noema_plans": False}), fresh_store("refused"),
        "Please move card 88 into the Astronomy category.", checkpointer=InMemorySaver(),
    )  # fmt: skip
    trajectory = TrajectoryRecorder.from_state(state)
    candidates = trajectory.metadata["store_candidates"]
    assert trajectory.metadata["error"] == "not_found" and "Geography" in candidates
    assert all(name in str(trajectory.final_output) for name in candidates)
