"""Trajectory match modes agree with agentevals; perturbations move the scores the right way."""

from __future__ import annotations

import random
from typing import Any

import pytest
from agentevals.trajectory.match import create_trajectory_match_evaluator
from langchain_core.messages import AIMessage

from noema_graph.errors import ConfigurationError
from noema_graph.evals import (
    EvalItem,
    ExpectedCall,
    StepAction,
    Trajectory,
    TrajectoryEvaluator,
    TrajectoryStep,
    precision_recall,
    trajectory_matches,
)
from noema_graph.evals.matching import ARGS_MATCHES, TRAJECTORY_MATCHES

TOOLS = ("search_cards", "create_cards", "flag_card", "move_card")


def _call(rng: random.Random) -> StepAction:
    keys = rng.sample(["card_id", "deck_id", "query", "limit"], k=rng.randint(0, 3))
    return StepAction(tool=rng.choice(TOOLS), input={k: rng.randint(1, 3) for k in keys})


def _perturb(calls: list[StepAction], rng: random.Random) -> list[StepAction]:
    out = list(calls)
    kind = rng.choice(["drop", "swap", "add", "arg", "extra_arg", "same", "fresh"])
    if kind == "drop" and out:
        out.pop(rng.randrange(len(out)))
    elif kind == "swap" and len(out) > 1:
        i, j = rng.sample(range(len(out)), 2)
        out[i], out[j] = out[j], out[i]
    elif kind == "add":
        out.insert(rng.randint(0, len(out)), _call(rng))
    elif kind in ("arg", "extra_arg") and out:
        i = rng.randrange(len(out))
        args = dict(out[i].input or {})
        key = rng.choice(list(args)) if args and kind == "arg" else "extra"
        args[key] = 99
        out[i] = StepAction(tool=out[i].tool, input=args)
    elif kind == "fresh":
        out = [_call(rng) for _ in range(rng.randint(0, 4))]
    return out


def _pairs(count: int, seed: int = 16) -> list[tuple[list[StepAction], list[StepAction]]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        expected = [_call(rng) for _ in range(rng.randint(0, 4))]
        pairs.append((_perturb(expected, rng), expected))
    return pairs


def _langchain(calls: list[StepAction]) -> list[AIMessage]:
    """The same calls as LangChain messages, built independently of our conversion."""
    return [
        AIMessage(
            content="", tool_calls=[{"name": c.tool, "args": dict(c.input or {}), "id": f"c{i}"}]
        )
        for i, c in enumerate(calls)
    ]


@pytest.mark.parametrize("mode", TRAJECTORY_MATCHES)
@pytest.mark.parametrize("args_mode", ARGS_MATCHES)
def test_every_mode_agrees_with_agentevals(mode: Any, args_mode: Any) -> None:
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=mode, tool_args_match_mode=args_mode
    )
    outcomes = set()
    for actual, expected in _pairs(120):
        theirs: Any = evaluator(outputs=_langchain(actual), reference_outputs=_langchain(expected))
        ours = trajectory_matches(actual, expected, trajectory_match=mode, args_match=args_mode)
        assert ours == theirs["score"], (mode, args_mode, actual, expected)
        outcomes.add(ours)
    assert outcomes == {True, False}  # the generated pairs exercise both answers


def test_precision_and_recall_are_one_exactly_when_unordered_matches() -> None:
    for actual, expected in _pairs(200, seed=3):
        precision, recall = precision_recall(actual, expected)
        unordered = trajectory_matches(actual, expected, trajectory_match="unordered")
        assert (precision == 1.0 and recall == 1.0) == unordered


GOLD = [
    StepAction(tool="search_cards", input={"query": "neon"}),
    StepAction(tool="create_cards", input={"deck_id": 2}),
    StepAction(tool="flag_card", input={"card_id": 12}),
]


def _score(actual: list[StepAction], mode: Any = "strict", args_mode: Any = "exact") -> Any:
    item = EvalItem(
        id="x",
        input="q",
        expected_trajectory=[ExpectedCall(tool=c.tool, input=c.input) for c in GOLD],
    )
    trajectory = Trajectory(input="q", steps=[TrajectoryStep(action=c) for c in actual])
    evaluator = TrajectoryEvaluator(trajectory_match=mode, args_match=args_mode)
    return evaluator.score(item, trajectory)


def test_dropping_a_call_lowers_recall_not_precision() -> None:
    result = _score(GOLD[:2])
    assert (result.trajectory_score, result.tool_precision, result.tool_recall) == (
        0.0,
        1.0,
        0.6667,
    )
    assert _score(GOLD[:2], "subset").trajectory_score == 1.0
    assert _score(GOLD[:2], "superset").trajectory_score == 0.0


def test_adding_a_call_lowers_precision_not_recall() -> None:
    extra = [*GOLD, StepAction(tool="move_card", input={"card_id": 1})]
    result = _score(extra)
    assert (result.trajectory_score, result.tool_precision, result.tool_recall) == (0.0, 0.75, 1.0)
    assert _score(extra, "superset").trajectory_score == 1.0
    assert _score(extra, "subset").trajectory_score == 0.0


def test_swapping_calls_fails_strict_only() -> None:
    swapped = [GOLD[1], GOLD[0], GOLD[2]]
    assert _score(swapped).trajectory_score == 0.0
    for mode in ("unordered", "subset", "superset"):
        assert _score(swapped, mode).trajectory_score == 1.0
    assert (_score(swapped).tool_precision, _score(swapped).tool_recall) == (1.0, 1.0)


def test_changing_an_argument_depends_on_the_args_mode() -> None:
    changed = [GOLD[0], StepAction(tool="create_cards", input={"deck_id": 3}), GOLD[2]]
    exact = _score(changed)
    assert (exact.trajectory_score, exact.tool_precision, exact.tool_recall) == (
        0.0,
        0.6667,
        0.6667,
    )
    assert _score(changed, args_mode="ignore").trajectory_score == 1.0
    richer = [GOLD[0], StepAction(tool="create_cards", input={"deck_id": 2, "cards": []}), GOLD[2]]
    assert _score(richer, args_mode="superset").trajectory_score == 1.0
    assert _score(richer, args_mode="subset").trajectory_score == 0.0
    assert _score(richer).trajectory_score == 0.0


def test_the_perfect_trajectory_scores_one_in_every_mode() -> None:
    for mode in TRAJECTORY_MATCHES:
        for args_mode in ARGS_MATCHES:
            result = _score(GOLD, mode, args_mode)
            assert (result.trajectory_score, result.tool_precision, result.tool_recall) == (1, 1, 1)


def test_per_tool_overrides_are_agentevals_overrides() -> None:
    actual = [StepAction(tool="search_cards", input={"query": "NEON", "limit": 5})]
    expected = [StepAction(tool="search_cards", input={"query": "neon"})]

    def same_query(a: dict[str, Any], e: dict[str, Any]) -> bool:
        return a["query"].lower() == e["query"].lower()

    assert trajectory_matches(actual, expected, overrides={"search_cards": same_query})
    assert precision_recall(actual, expected, overrides={"search_cards": same_query}) == (1.0, 1.0)
    assert not trajectory_matches(actual, expected, overrides={"search_cards": ["query"]})


def test_unknown_modes_name_the_choices() -> None:
    with pytest.raises(ConfigurationError, match=r"trajectory_match.*'loose'"):
        TrajectoryEvaluator(trajectory_match="loose")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="args_match"):
        trajectory_matches([], [], args_match="fuzzy")  # type: ignore[arg-type]
