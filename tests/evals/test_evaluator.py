"""TrajectoryEvaluator.evaluate: one result per item, and a summary per agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def test_results_carry_input_output_errors_coherence_and_a_pass_rate() -> None:
    report = TrajectoryEvaluator(final_scorer="json_subset").evaluate(_dataset(), _trajectories())
    a, b, _ = report["results"]
    assert a["input"] == "next card?" and a["final_output"] == {"card_id": 55, "reason": "due"}
    assert a["errors"] == [] and a["coherence"] == 1.0
    assert b["coherence"] == 0.0  # the answer claims a deletion no call made
    assert report["summary"]["pass_rate"] == 1.0
    assert report["summary"]["by_agent"]["governance"]["pass_rate"] == 1.0


def test_evaluate_accepts_a_dict_a_path_and_a_list_in_dataset_order(tmp_path: Path) -> None:
    evaluator = TrajectoryEvaluator(final_scorer="json_subset")
    raw = _dataset().model_dump(mode="json")
    expected = evaluator.evaluate(_dataset(), _trajectories())
    assert evaluator.evaluate(raw, _trajectories()) == expected
    path = tmp_path / "d.json"
    path.write_text(json.dumps(raw))
    assert evaluator.evaluate(path, _trajectories()) == expected
    assert evaluator.evaluate(str(path), _trajectories()) == expected
    two = _dataset().dataset[:2]
    listed = evaluator.evaluate(two, list(_trajectories().values()))
    assert [r["id"] for r in listed["results"]] == ["a", "b"]
    assert listed["results"][0]["final_score"] == 1.0


@pytest.mark.parametrize(
    ("dataset", "trajectories", "argument"),
    [
        ({"items": []}, {}, "dataset"),
        (42, {}, "dataset"),
        ([{"id": "a", "input": "q"}], {}, "dataset"),
        (None, "a.json", "trajectories"),
        (None, [Trajectory(input="q")], "trajectories"),  # 1 trajectory for 3 items
        (None, {"a": 42}, "trajectories"),
    ],
)
def test_evaluate_rejects_other_arguments_naming_them(
    dataset: Any, trajectories: Any, argument: str
) -> None:
    with pytest.raises(ConfigurationError, match=argument):
        TrajectoryEvaluator().evaluate(_dataset() if dataset is None else dataset, trajectories)


def test_items_without_id_get_stable_ids(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"dataset": [{"input": "flag card 12"}, {"input": "next?"}]}))
    first, second = load_dataset(path).dataset
    assert first.id.startswith("item-0-") and second.id.startswith("item-1-")
    assert load_dataset(path).dataset[0].id == first.id  # stable across loads
    assert first.id != EvalDataset.model_validate({"dataset": [{"input": "other"}]}).dataset[0].id


def test_the_final_scorer_receives_the_input_when_it_takes_it() -> None:
    seen: list[str] = []

    def judge(output: Any, expected: Any, inputs: str = "") -> float:
        seen.append(inputs)
        return 1.0

    TrajectoryEvaluator(final_scorer=judge).evaluate(_dataset(), _trajectories())
    assert seen == ["next card?", "flag card 12"]
