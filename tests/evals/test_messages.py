"""Message-level trajectories: the same answer as agentevals on message lists, in every mode."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from agentevals.trajectory.match import create_trajectory_match_evaluator
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from noema_graph.errors import ConfigurationError
from noema_graph.evals import (
    EvalItem,
    StepAction,
    Trajectory,
    TrajectoryEvaluator,
    TrajectoryStep,
    precision_recall,
    trajectory_matches,
)
from noema_graph.evals.matching import AGENTEVALS_MATCHES, ARGS_MATCHES
from tests.evals.message_pairs import message_pairs

PAIRS = 400
"""Pairs per mode combination: 6,400 in all (bench/bench_agreement.py sweeps more)."""


def test_message_lists_agree_with_agentevals_in_all_16_mode_combinations() -> None:
    pairs = message_pairs(PAIRS, seed=28)
    disagreements: list[Any] = []
    modes: list[Any] = list(itertools.product(AGENTEVALS_MATCHES, ARGS_MATCHES))
    for mode, args_mode in modes:
        evaluator: Any = create_trajectory_match_evaluator(
            trajectory_match_mode=mode, tool_args_match_mode=args_mode
        )
        outcomes: set[bool] = set()
        for output, reference in pairs:
            theirs = bool(evaluator(outputs=output, reference_outputs=reference)["score"])
            ours = trajectory_matches(
                Trajectory.from_messages(output),
                Trajectory.from_messages(reference),
                trajectory_match=mode,
                args_match=args_mode,
            )
            if ours != theirs:
                disagreements.append((mode, args_mode, output, reference))
            outcomes.add(theirs)
        assert outcomes == {True, False}, (mode, args_mode)  # both answers exercised
    assert disagreements == []
    assert len(pairs) * 16 >= 6400


def _calls(*names: str) -> list[dict[str, Any]]:
    return [
        {"id": f"{n}{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
        for i, n in enumerate(names)
    ]


def _run(*groups: tuple[str, ...] | str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "make a card"}]
    for group in groups:
        if isinstance(group, str):
            messages.append({"role": "assistant", "content": group})
            continue
        calls = _calls(*group)
        messages.append({"role": "assistant", "content": "", "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls]
    return [*messages, {"role": "assistant", "content": "done"}]


@pytest.mark.parametrize(
    ("output", "reference", "strict"),
    [
        (_run(("search",), ("create_card",)), _run(("search", "create_card")), False),
        (_run(("search",), "let me check", ("create_card",)),
         _run(("search",), ("create_card",)), False),
        (_run(("create_card", "search")), _run(("search", "create_card")), True),
    ],
)  # fmt: skip
def test_strict_compares_messages_as_agentevals_does(
    output: list[dict[str, Any]], reference: list[dict[str, Any]], strict: bool
) -> None:
    evaluator: Any = create_trajectory_match_evaluator(trajectory_match_mode="strict")
    assert evaluator(outputs=output, reference_outputs=reference)["score"] is strict
    actual, expected = Trajectory.from_messages(output), Trajectory.from_messages(reference)
    assert trajectory_matches(actual, expected) is strict
    assert trajectory_matches(output, reference) is strict


def test_from_messages_and_back() -> None:
    messages = _run(("search", "create_card"), "checking", ("flag",))
    trajectory = Trajectory.from_messages(messages)
    assert trajectory.input == "make a card" and trajectory.final_output == "done"
    assert [s.message_index for s in trajectory.steps] == [1, 1, 4, 5]
    assert [[c.tool for c in m] for m in trajectory.message_calls()] == [
        ["search", "create_card"],
        ["flag"],
    ]
    assert trajectory.steps[0].observation == "ok"
    back = trajectory.to_messages()
    assert [m["role"] for m in back] == [m["role"] for m in messages]
    assert Trajectory.from_messages(back) == trajectory
    assert Trajectory.model_validate_json(trajectory.to_json()) == trajectory


def test_langchain_messages_are_read_too() -> None:
    messages = [
        HumanMessage("flag card 12"),
        AIMessage("", tool_calls=[{"name": "flag_card", "args": {"card_id": 12}, "id": "a"}]),
        ToolMessage('{"status": "success"}', tool_call_id="a"),
        AIMessage("Card 12 is flagged."),
    ]
    trajectory = Trajectory.from_messages(messages)
    assert trajectory.tool_calls() == [StepAction(tool="flag_card", input={"card_id": 12})]
    assert trajectory.final_output == "Card 12 is flagged."
    assert trajectory_matches(trajectory, {"messages": messages})


def test_a_recorded_trajectory_without_messages_is_one_call_per_message() -> None:
    steps = [TrajectoryStep(action=StepAction(tool=t, input={})) for t in ("a", "b")]
    trajectory = Trajectory(input="q", steps=steps, final_output="x")
    roles = [m["role"] for m in trajectory.to_messages()]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert trajectory_matches(trajectory, [{"tool": "a"}, {"tool": "b"}])
    assert not trajectory_matches(trajectory, [[{"tool": "a"}, {"tool": "b"}]])
    grouped = [s.model_copy(update={"message_index": 1}) for s in steps]
    together = Trajectory(input="q", steps=grouped)
    assert trajectory_matches(together, [[{"tool": "a"}, {"tool": "b"}]])


def test_an_item_never_matches_with_precision_zero() -> None:
    richer = [StepAction(tool="A", input={"x": 1, "y": 2})]
    plain = [StepAction(tool="A", input={"x": 1})]
    for mode, args_mode in itertools.product(AGENTEVALS_MATCHES, ARGS_MATCHES):
        for actual, expected in ((richer, plain), (plain, richer)):
            modes: Any = {"trajectory_match": mode, "args_match": args_mode}
            matched = trajectory_matches(actual, expected, **modes)
            assert matched == (precision_recall(actual, expected, **modes) == (1.0, 1.0))
    # agentevals' subset mode compares the arguments the other way round
    assert trajectory_matches(richer, plain, trajectory_match="subset", args_match="subset")
    assert precision_recall(richer, plain, trajectory_match="subset", args_match="subset") == (
        1.0,
        1.0,
    )


def test_optimal_pairing_is_its_own_mode() -> None:
    actual = [StepAction(tool="A", input={"x": 1, "y": 2}), StepAction(tool="A", input={"x": 1})]
    expected = [StepAction(tool="A", input={"x": 1}), StepAction(tool="A", input={"x": 1, "y": 2})]
    modes: Any = {"args_match": "superset"}
    assert not trajectory_matches(actual, expected, trajectory_match="superset", **modes)
    assert trajectory_matches(actual, expected, trajectory_match="superset_optimal", **modes)
    assert trajectory_matches(actual, expected, trajectory_match="unordered_optimal", **modes)
    assert trajectory_matches(actual, expected, trajectory_match="subset_optimal", **modes)
    assert precision_recall(actual, expected, trajectory_match="unordered_optimal", **modes) == (
        1.0,
        1.0,
    )
    assert not trajectory_matches(actual[:1], expected, trajectory_match="unordered_optimal")


def test_the_evaluator_reads_expected_messages() -> None:
    item = EvalItem(
        id="x",
        input="q",
        expected_trajectory=[[{"tool": "a", "input": {}}, {"tool": "b", "input": {}}]],  # pyright: ignore[reportArgumentType] -- validated by pydantic
    )
    steps = [
        TrajectoryStep(action=StepAction(tool=t, input={}), message_index=1) for t in ("b", "a")
    ]
    result = TrajectoryEvaluator().score(item, Trajectory(input="q", steps=steps))
    assert (result.trajectory_score, result.tool_precision, result.tool_recall) == (1, 1, 1)
    apart = [s.model_copy(update={"message_index": n}) for n, s in enumerate(steps)]
    assert (
        TrajectoryEvaluator().score(item, Trajectory(input="q", steps=apart)).trajectory_score == 0
    )
    assert json.loads(item.model_dump_json())["expected_trajectory"][0][1]["tool"] == "b"


def test_messages_no_step_holds_come_back_with_their_roles() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        *_run(("search",)),
        {"role": "user", "content": "and now?"},
        {"role": "assistant", "content": "nothing else"},
    ]
    trajectory = Trajectory.from_messages(messages)
    assert trajectory.input == "make a card" and trajectory.final_output == "nothing else"
    assert [m["role"] for m in trajectory.to_messages()] == [m["role"] for m in messages]
    assert trajectory_matches(trajectory, messages)
    assert not trajectory_matches(trajectory, messages[1:])


def test_what_is_not_a_message_list_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="messages"):
        Trajectory.from_messages("hello")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="expected_trajectory"):
        trajectory_matches([{"tool": "a"}], [42])
