"""Evaluation: record trajectories, score them like agentevals, catch hallucinated actions.

* :class:`TrajectoryRecorder`: trajectories from a state or a checkpointed thread, JSON round
  trip, and :meth:`~TrajectoryRecorder.replay` to rebuild a run offline.
* :class:`TrajectoryEvaluator`: final scorers, agentevals' trajectory match modes, tool
  precision/recall, rule violations and :func:`hallucinated_actions`.
* :func:`run_items`: run Noema agents over dataset items (what ``noema-graph eval`` does).
* What the agent did: :func:`store_changes` and :func:`judge_state` (the store's end state),
  :func:`ungrounded_words` (words no tool gave), :func:`answer_leaks` (secret fields in the
  answer), :func:`compare_results` (two results files, ``noema-graph eval-diff``).
"""

from pathlib import Path

from noema_graph.claims import Finding, hallucinated_actions
from noema_graph.claims.check import apply_claims_check, claims_check
from noema_graph.evals.diff import compare_results
from noema_graph.evals.evaluator import ItemResult, TrajectoryEvaluator, summarize
from noema_graph.evals.expectations import Expectations, RowExpectation, load_expectations
from noema_graph.evals.leaks import Leak, answer_leaks
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
from noema_graph.evals.state import Change, StateVerdict, judge_state, store_changes
from noema_graph.evals.violations import Budget, Violation, find_violations
from noema_graph.evals.words import Ungrounded, ungrounded_words
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
"""The Noema task set: 60 tasks over the demo store, six per agent."""

__all__ = [
    "NOEMA_TASKS",
    "Budget",
    "Change",
    "EvalDataset",
    "EvalItem",
    "Expectations",
    "ExpectedCall",
    "Finding",
    "ItemResult",
    "Leak",
    "ReplayChatModel",
    "ReplayExhausted",
    "RowExpectation",
    "StateVerdict",
    "StepAction",
    "Trajectory",
    "TrajectoryEvaluator",
    "TrajectoryRecorder",
    "TrajectoryStep",
    "TrajectoryUsage",
    "Ungrounded",
    "Violation",
    "answer_leaks",
    "apply_claims_check",
    "claims_check",
    "compare_results",
    "exact",
    "find_violations",
    "hallucinated_actions",
    "json_subset",
    "judge_state",
    "llm_judge",
    "load_dataset",
    "load_expectations",
    "load_trajectories",
    "normalized_text",
    "numeric",
    "precision_recall",
    "run_item",
    "run_items",
    "select_items",
    "store_changes",
    "summarize",
    "trajectory_matches",
    "ungrounded_words",
]
