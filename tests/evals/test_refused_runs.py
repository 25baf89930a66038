"""A run refused before it plans is still a trajectory the evaluator grades."""

from __future__ import annotations

from pathlib import Path

from noema_graph.evals import run_item
from noema_graph.evals.evaluator import TrajectoryEvaluator
from noema_graph.noema import DemoSummary
from noema_graph.trajectory.schema import EvalItem
from tests.scripted import ScriptedChatModel


def test_a_refusal_before_the_plan_records_its_error_code(
    demo_master: DemoSummary, tmp_path: Path
) -> None:
    item = EvalItem(
        id="refused",
        input="Pick the next card for user_id 3, please.",
        tags=["agent:learning", "user:ada"],
        expected_success=False,
        expected_error_code="forbidden",
    )
    model = ScriptedChatModel(script=[])  # refused before any model call
    trajectory = run_item(
        item, agent="learning", model=model, master=Path(demo_master.path), workdir=tmp_path
    )
    assert trajectory.metadata["success"] is False
    assert trajectory.metadata["error"] == "forbidden"
    result = TrajectoryEvaluator().score(item, trajectory)
    assert result.error_code == "forbidden" and result.outcome_ok and result.passed
