"""TrajectoryEvaluator.evaluate: one result per item, and a summary per agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.evals import (
    Budget,
    EvalDataset,
    StepAction,
    Trajectory,
    TrajectoryEvaluator,
    TrajectoryStep,
    load_dataset,
)


def _dataset() -> EvalDataset:
    return EvalDataset.model_validate(
        {
            "dataset": [
                {
                    "id": "a",
                    "input": "next card?",
                    "expected_output": {"card_id": 55},
                    "expected_trajectory": [{"tool": "list_due_cards", "input": {"user_id": 1}}],
                    "tags": ["agent:learning", "user:ada"],
                },
                {
                    "id": "b",
                    "input": "flag card 12",
                    "expected_output": {"flagged": [{"card_id": 12}]},
                    "expected_trajectory": None,
                    "tags": ["agent:governance"],
                },
                {"id": "c", "input": "never run", "tags": ["agent:governance"]},
            ]
        }
    )


def _trajectories() -> dict[str, Trajectory]:
    due = TrajectoryStep(
        action=StepAction(tool="list_due_cards", input={"user_id": 1, "limit": 5}),
        observation='{"status": "success", "data": {"cards": [{"card_id": 55}]}}',
    )
    flag = TrajectoryStep(
        action=StepAction(tool="flag_card", input={"card_id": 12}),
        observation='{"status": "success", "data": {"id": 1, "card_id": 12}}',
    )
    return {
        "a": Trajectory(
            input="next card?",
            final_output={"card_id": 55, "reason": "due"},
            steps=[due],
            usage={"total_tokens": 100, "cost_usd": 0.001},
            metadata={"wall_s": 2.0},
        ),
        "b": Trajectory(
            input="flag card 12",
            final_output={"flagged": [{"card_id": 12}], "summary": "Flagged card 12, deleted 13."},
            steps=[flag],
            usage={"total_tokens": 50, "cost_usd": None},
            metadata={"execution_time_ms": 1000},
        ),
    }


def test_evaluate_scores_each_item_and_summarizes_per_agent() -> None:
    evaluator = TrajectoryEvaluator(
        trajectory_match="superset", args_match="superset", final_scorer="json_subset"
    )
    report = evaluator.evaluate(_dataset(), _trajectories())
    a, b, c = report["results"]
    assert (a["final_score"], a["trajectory_score"], a["tool_recall"]) == (1.0, 1.0, 1.0)
    assert (a["tokens"], a["seconds"], a["agent"]) == (100, 2.0, "learning")
    assert b["trajectory_score"] is None and b["tool_precision"] is None
    assert [h["action"] for h in b["hallucinated_actions"]] == ["delete"]
    assert c["missing"] and c["final_score"] == 0.0
    summary = report["summary"]
    assert (summary["items"], summary["scored"], summary["passed"]) == (3, 2, 2)
    assert summary["cost_usd"] is None  # one run's cost is unknown
    assert summary["hallucinations"] == 1 and summary["seconds_per_item"] == 1.5
    assert summary["by_agent"]["governance"]["items"] == 2
    assert summary["by_agent"]["governance"]["scored"] == 1
    json.dumps(report)  # plain JSON


def test_budget_and_claims_options() -> None:
    evaluator = TrajectoryEvaluator(
        final_scorer="json_subset", budget=Budget(max_total_tokens=60), check_claims=False
    )
    report = evaluator.evaluate(_dataset().dataset[:2], _trajectories())
    a, b = report["results"]
    assert [v["rule"] for v in a["violations"]] == ["limit"] and b["violations"] == []
    assert b["hallucinated_actions"] == []
    assert report["summary"]["violations_by_rule"] == {"limit": 1}


def test_datasets_are_checked_when_loaded(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"dataset": [{"id": "x", "input": "q"}] * 2}))
    with pytest.raises(ConfigurationError, match=r"ids \['x'\] repeat"):
        load_dataset(path)
    path.write_text(json.dumps({"dataset": [{"id": "x"}]}))
    with pytest.raises(ConfigurationError, match="input"):
        load_dataset(path)
    with pytest.raises(ConfigurationError, match="no file"):
        load_dataset(tmp_path / "missing.json")
