"""Evaluation: record trajectories, score them like agentevals, catch hallucinated actions.

* :class:`TrajectoryRecorder`: trajectories from a state or a checkpointed thread, JSON round
  trip, and :meth:`~TrajectoryRecorder.replay` to rebuild a run offline.
* :class:`TrajectoryEvaluator`: final scorers, agentevals' trajectory match modes, tool
  precision/recall, rule violations and :func:`hallucinated_actions`.
* :func:`run_items`: run Noema agents over dataset items (what ``noema-graph eval`` does).
"""

from pathlib import Path

from noema_graph.claims import Finding, hallucinated_actions
from noema_graph.claims.check import apply_claims_check, claims_check
from noema_graph.evals.evaluator import ItemResult, TrajectoryEvaluator, summarize
from noema_graph.evals.matching import precision_recall, trajectory_matches
from noema_graph.evals.recorder import TrajectoryRecorder
from noema_graph.evals.replay import ReplayChatModel, ReplayExhausted
from noema_graph.evals.runner import run_item, run_items, select_items
from noema_graph.evals.scorers import (
    exact,
    json_subset,
    llm_judge,
    normalized_text,
    numeric,
)
from noema_graph.evals.violations import Budget, Violation, find_violations
from noema_graph.trajectory.schema import (
    EvalDataset,
    EvalItem,
    ExpectedCall,
    StepAction,
    Trajectory,
    TrajectoryStep,
    TrajectoryUsage,
    load_dataset,
    load_trajectories,
)

NOEMA_TASKS = Path(__file__).parent / "datasets" / "noema_tasks.json"
"""The Noema task set: 40 tasks over the demo store, four per agent."""

__all__ = [
    "NOEMA_TASKS",
    "Budget",
    "EvalDataset",
    "EvalItem",
    "ExpectedCall",
    "Finding",
    "ItemResult",
    "ReplayChatModel",
    "ReplayExhausted",
    "StepAction",
    "Trajectory",
    "TrajectoryEvaluator",
    "TrajectoryRecorder",
    "TrajectoryStep",
    "TrajectoryUsage",
    "Violation",
    "apply_claims_check",
    "claims_check",
    "exact",
    "find_violations",
    "hallucinated_actions",
    "json_subset",
    "llm_judge",
    "load_dataset",
    "load_trajectories",
    "normalized_text",
    "numeric",
    "precision_recall",
    "run_item",
    "run_items",
    "select_items",
    "summarize",
    "trajectory_matches",
]
