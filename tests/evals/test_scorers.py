"""Final scorers and rule violations."""

from __future__ import annotations

import json
from typing import Any

import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.evals import (
    Budget,
    StepAction,
    Trajectory,
    TrajectoryStep,
    exact,
    find_violations,
    json_subset,
    llm_judge,
    normalized_text,
    numeric,
)
from noema_graph.evals.scorers import resolve_scorer
from tests.scripted import ScriptedChatModel, structured


def test_exact_and_normalized_text() -> None:
    assert exact({"a": 1}, {"a": 1}) == 1.0
    assert exact('{"a": 1}', {"a": 1}) == 1.0  # JSON text is parsed
    assert exact({"a": 1}, {"a": 2}) == 0.0
    assert normalized_text("  Card 55, please! ", "card 55 please") == 1.0
    assert normalized_text("card 56", "card 55") == 0.0


def test_numeric_tolerance() -> None:
    close = numeric(0.01)
    assert close("Brier score: 0.163", 0.17) == 1.0
    assert close(0.15, 0.17) == 0.0
    assert numeric(relative=0.1)(105, 100) == 1.0
    assert close("no number", 1) == 0.0


def test_json_subset_gives_partial_credit() -> None:
    score = json_subset(0.01)
    gold = {"card_id": 55, "brier": 0.163}
    assert score({"card_id": 55, "brier": 0.1631, "reason": "x"}, gold) == 1.0
    assert score({"card_id": 55, "brier": 0.3}, gold) == 0.5
    assert score(json.dumps({"card_id": 55, "brier": 0.16}), gold) == 1.0
    flagged = {"flagged": [{"card_id": 1}, {"card_id": 2}, {"card_id": 3}, {"card_id": 4}]}
    got = {"flagged": [{"card_id": 2, "issue": "x"}, {"card_id": 4}, {"card_id": 9}]}
    assert score(got, flagged) == 0.5
    assert score("not json", gold) == 0.0


def test_json_subset_operators_for_open_answers() -> None:
    score = json_subset()
    assert score({"new_cards_per_day": 12}, {"new_cards_per_day": {"$gte": 0, "$lte": 20}}) == 1.0
    assert score({"new_cards_per_day": 30}, {"new_cards_per_day": {"$gte": 0, "$lte": 20}}) == 0.5
    assert score({"card_ids": [1, 2]}, {"card_ids": {"$len": 2}}) == 1.0
    no_answer = {"question": {"$not_icontains": "Ar"}}
    assert score({"question": "Which gas is argon? Are noble gases inert?"}, no_answer) == 1.0
    assert score({"question": "Is it Ar?"}, no_answer) == 0.0
    assert score({"kind": "part_of"}, {"kind": {"$in": ["part_of", "related_to"]}}) == 1.0
    with pytest.raises(ConfigurationError, match=r"\$near"):
        score({"a": 1}, {"a": {"$near": 1}})


def test_named_and_custom_scorers() -> None:
    assert resolve_scorer("exact") is exact

    def custom(out: Any, gold: Any) -> float:
        return 0.25

    assert resolve_scorer(custom) is custom
    with pytest.raises(ConfigurationError, match=r"final_scorer.*'fuzzy'"):
        resolve_scorer("fuzzy")


def test_llm_judge_asks_the_configured_model() -> None:
    judge = ScriptedChatModel(script=[structured("score", reasoning="Same card.", score=True)])
    score = llm_judge(judge)
    assert score({"card_id": 55}, {"card_id": 55}, inputs="Which card is due next?") == 1.0
    prompt = " ".join(str(m.content) for m in judge.prompts[0])
    assert "55" in prompt and "Which card is due next?" in prompt
    judge.assert_complete()


def _step(tool: str, args: Any, observation: str = "ok", error: str | None = None) -> Any:
    return TrajectoryStep(
        action=StepAction(tool=tool, input=args), observation=observation, error=error
    )


def test_violations_of_every_rule() -> None:
    refusal = json.dumps({"status": "error", "error": {"type": "invalid_input", "message": "x"}})
    trajectory = Trajectory(
        input="q",
        steps=[
            _step("delete_deck", {}, error="Unknown tool 'delete_deck'. Available tools: a."),
            _step("flag_card", {"card_id": "twelve"}, refusal, error="card_id: not an int"),
            _step("flag_card", {"card_id": "twelve"}, refusal, error="card_id: not an int"),
            _step("search_cards", {"query": "neon"}, "[1, 2]"),
            _step("search_cards", {"query": "neon"}, "[1, 2]"),
            _step("search_cards", {"query": "neon"}, "[1, 2, 3]"),
        ],
        metadata={"stop_reason": "max_iterations"},
    )
    rules = [(v.rule, v.step) for v in find_violations(trajectory)]
    assert rules == [
        ("unknown_tool", 0),
        ("invalid_input", 1),
        ("invalid_input", 2),
        ("retry_without_change", 2),
        ("loop", 4),
        ("limit", None),
    ]


def test_violations_against_the_tool_schemas_and_a_budget() -> None:
    schema = {
        "type": "object",
        "properties": {"card_id": {"type": "integer"}},
        "required": ["card_id"],
    }
    trajectory = Trajectory(
        input="q",
        steps=[_step("flag_card", {"card": 3}), _step("move_card", {"card_id": 3})],
        usage={"total_tokens": 5000},
    )
    found = find_violations(
        trajectory, tools={"flag_card": schema}, budget=Budget(max_total_tokens=1000)
    )
    assert [(v.rule, v.step) for v in found] == [
        ("invalid_input", 0),
        ("unknown_tool", 1),
        ("limit", None),
    ]
    assert "card_id" in found[0].detail and "5000" in found[2].detail


def test_a_clean_trajectory_has_no_violation() -> None:
    trajectory = Trajectory(
        input="q",
        steps=[_step("search_cards", {"query": "a"}), _step("search_cards", {"query": "b"})],
    )
    assert find_violations(trajectory) == []
