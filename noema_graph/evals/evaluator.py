"""Score trajectories against a dataset: final output, trajectory match, rules, claims."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.evals.claims import hallucinated_actions
from noema_graph.evals.matching import (
    ArgsMatch,
    TrajectoryMatch,
    check_modes,
    precision_recall,
    trajectory_matches,
)
from noema_graph.evals.scorers import FinalScorer, resolve_scorer
from noema_graph.evals.trajectory import EvalDataset, EvalItem, Trajectory
from noema_graph.evals.violations import Budget, find_violations


class ItemResult(BaseModel):
    """The scores of one dataset item."""

    model_config = ConfigDict(frozen=True)

    id: str
    agent: str | None = None
    final_score: float = Field(description="0..1 from the final scorer; 0 when not run.")
    trajectory_score: float | None = Field(
        default=None, description="1.0 or 0.0 by the match mode; None without an expected one."
    )
    tool_precision: float | None = None
    tool_recall: float | None = None
    violations: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    hallucinated_actions: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    success: bool | None = None
    tokens: int = 0
    cost_usd: float | None = None
    seconds: float | None = None
    missing: bool = Field(default=False, description="No trajectory was given for the item.")


def _seconds(trajectory: Trajectory) -> float | None:
    meta = trajectory.metadata
    if isinstance(meta.get("wall_s"), int | float):
        return round(float(meta["wall_s"]), 3)
    if isinstance(meta.get("execution_time_ms"), int | float):
        return round(float(meta["execution_time_ms"]) / 1000, 3)
    return None


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.fmean(known), 4) if known else None


class TrajectoryEvaluator:
    """Scores runs the way LangChain's agentevals does, plus rules and hallucinated actions.

    Args:
        trajectory_match: ``strict`` | ``unordered`` | ``subset`` | ``superset`` (agentevals').
        args_match: ``exact`` | ``ignore`` | ``subset`` | ``superset`` (agentevals').
        final_scorer: ``exact`` | ``normalized`` | ``numeric`` | ``json_subset``, or a
            callable ``(output, expected) -> float`` such as :func:`~.scorers.llm_judge`.
        tolerance: Absolute tolerance of the numeric and JSON-subset scorers.
        args_overrides: Per-tool argument rules (agentevals' ``tool_args_match_overrides``).
        tools: The agent's tools, name -> JSON schema of the arguments, for the unknown-tool
            and invalid-input rules; None: read from the refusals recorded in the steps.
        budget: Limits each run should stay within.
        check_claims: Look for hallucinated actions.

    Raises:
        ConfigurationError: An unknown mode or scorer name.
    """

    def __init__(
        self,
        *,
        trajectory_match: TrajectoryMatch = "strict",
        args_match: ArgsMatch = "exact",
        final_scorer: str | FinalScorer = "exact",
        tolerance: float = 0.0,
        args_overrides: Mapping[str, Any] | None = None,
        tools: Mapping[str, Mapping[str, Any]] | None = None,
        budget: Budget | None = None,
        check_claims: bool = True,
    ) -> None:
        """Validate the modes and resolve the scorer."""
        check_modes(trajectory_match, args_match)
        self.trajectory_match: TrajectoryMatch = trajectory_match
        self.args_match: ArgsMatch = args_match
        self.scorer = resolve_scorer(final_scorer, tolerance=tolerance)
        self.args_overrides = args_overrides
        self.tools = tools
        self.budget = budget
        self.check_claims = check_claims

    def score(self, item: EvalItem, trajectory: Trajectory | None) -> ItemResult:
        """Return the scores of one item (all zero and ``missing`` without a trajectory)."""
        agent = item.tag("agent")
        if trajectory is None:
            return ItemResult(id=item.id, agent=agent, final_score=0.0, missing=True)
        actual = trajectory.tool_calls()
        expected = item.expected_trajectory
        match = precision = recall = None
        if expected is not None:
            match = trajectory_matches(
                actual,
                expected,
                trajectory_match=self.trajectory_match,
                args_match=self.args_match,
                overrides=self.args_overrides,
            )
            precision, recall = precision_recall(
                actual, expected, args_match=self.args_match, overrides=self.args_overrides
            )
        findings = hallucinated_actions(trajectory) if self.check_claims else []
        violations = find_violations(trajectory, tools=self.tools, budget=self.budget)
        return ItemResult(
            id=item.id,
            agent=agent or trajectory.metadata.get("agent"),
            final_score=round(float(self.scorer(trajectory.final_output, item.expected_output)), 4),
            trajectory_score=None if match is None else float(match),
            tool_precision=precision,
            tool_recall=recall,
            violations=[v.model_dump() for v in violations],
            hallucinated_actions=[f.model_dump() for f in findings],
            success=trajectory.metadata.get("success"),
            tokens=trajectory.usage.total_tokens,
            cost_usd=trajectory.usage.cost_usd,
            seconds=_seconds(trajectory),
        )

    def evaluate(
        self,
        dataset: EvalDataset | Sequence[EvalItem],
        trajectories: Mapping[str, Trajectory],
    ) -> dict[str, Any]:
        """Score every item against its trajectory (keyed by item id).

        Returns:
            ``{"results": [ItemResult as dict, ...], "summary": {...}}``; see :func:`summarize`.
        """
        items = dataset.dataset if isinstance(dataset, EvalDataset) else list(dataset)
        results = [self.score(item, trajectories.get(item.id)) for item in items]
        return {"results": [r.model_dump() for r in results], "summary": summarize(results)}


def _group(results: Sequence[ItemResult]) -> dict[str, Any]:
    ran = [r for r in results if not r.missing]
    costs = [r.cost_usd for r in ran]
    return {
        "items": len(results),
        "scored": len(ran),
        "final_score": _mean([r.final_score for r in ran]),
        "passed": sum(1 for r in ran if r.final_score >= 1.0),
        "trajectory_score": _mean([r.trajectory_score for r in ran]),
        "tool_precision": _mean([r.tool_precision for r in ran]),
        "tool_recall": _mean([r.tool_recall for r in ran]),
        "violations": sum(len(r.violations) for r in ran),
        "hallucinations": sum(len(r.hallucinated_actions) for r in ran),
        "tokens": sum(r.tokens for r in ran),
        "cost_usd": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
        "seconds_per_item": _mean([r.seconds for r in ran]),
    }


def summarize(results: Sequence[ItemResult | Mapping[str, Any]]) -> dict[str, Any]:
    """Return totals and means over ``results``, overall and per agent.

    Means skip the items that were not run (``missing``) and, for the trajectory scores,
    the items without an expected trajectory.
    """
    typed = [r if isinstance(r, ItemResult) else ItemResult.model_validate(r) for r in results]
    rules = Counter(v["rule"] for r in typed for v in r.violations)
    by_agent: dict[str, list[ItemResult]] = {}
    for result in typed:
        by_agent.setdefault(result.agent or "-", []).append(result)
    return {
        **_group(typed),
        "violations_by_rule": dict(sorted(rules.items())),
        "by_agent": {name: _group(group) for name, group in sorted(by_agent.items())},
    }
