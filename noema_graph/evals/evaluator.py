"""Score trajectories against a dataset: final output, trajectory match, rules, claims.

Beyond the answer: the store's end state (:mod:`~noema_graph.evals.state`, from the changes
the runner records in ``metadata["store_changes"]``), the run's outcome for refusal items
(``expected_success: false``), words no tool gave (:mod:`~noema_graph.evals.words`) and
answer leaks (:mod:`~noema_graph.evals.leaks`). An item passes when its answer scores 1.0,
the store changed as expected (any unasked change fails it), a refusal ended unsuccessful
with an expected code, and the answer leaks nothing; words no tool gave are reported, not
failed (the scorer is a heuristic: see its module).
"""

from __future__ import annotations

import inspect
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from noema_graph.claims import hallucinated_actions
from noema_graph.errors import ConfigurationError
from noema_graph.evals.coherence import CoherenceScorer, coherence
from noema_graph.evals.expectations import Expectations, item_expectations
from noema_graph.evals.leaks import answer_leaks
from noema_graph.evals.matching import (
    ArgsMatch,
    TrajectoryMatch,
    check_modes,
    precision_recall,
    trajectory_matches,
)
from noema_graph.evals.scorers import FinalScorer, resolve_scorer
from noema_graph.evals.state import judge_state
from noema_graph.evals.violations import Budget, find_violations
from noema_graph.evals.words import example_phrases, ungrounded_words
from noema_graph.trajectory.schema import EvalDataset, EvalItem, Trajectory, load_dataset


class ItemResult(BaseModel):
    """The scores of one dataset item."""

    model_config = ConfigDict(frozen=True)

    id: str
    agent: str | None = None
    input: str = Field(default="", description="The item's request.")
    final_output: Any = Field(default=None, description="What the run answered.")
    errors: list[str] = Field(
        default_factory=list[str], description="The run's error and its failed steps' errors."
    )
    final_score: float = Field(description="0..1 from the final scorer; 0 when not run.")
    trajectory_score: float | None = Field(
        default=None, description="1.0 or 0.0 by the match mode; None without an expected one."
    )
    tool_precision: float | None = None
    tool_recall: float | None = None
    violations: list[dict[str, object]] = Field(default_factory=list[dict[str, object]])
    hallucinated_actions: list[dict[str, object]] = Field(default_factory=list[dict[str, object]])
    coherence: float | None = Field(
        default=None, description="Thoughts consistent with the actions and the answer, 0..1."
    )
    success: bool | None = None
    tokens: int = 0
    cost_usd: float | None = None
    seconds: float | None = None
    prompt_tokens_processed: int | None = Field(
        default=None, description="Prompt tokens the model processed (not served from a cache)."
    )
    prompt_tokens_cached: int | None = Field(
        default=None, description="Prompt tokens the model server's cache served."
    )
    missing: bool = Field(default=False, description="No trajectory was given for the item.")
    passed: bool | None = Field(
        default=None,
        description="Answer 1.0, store as expected, refusal as expected, no leak; None in "
        "results written before these checks (read as final_score == 1.0).",
    )
    state_ok: bool | None = Field(
        default=None, description="The store changed as expected; None: changes not recorded."
    )
    unasked_changes: list[dict[str, object]] = Field(
        default_factory=list[dict[str, object]],
        description="Changes no expectation asked for: table, key, before, after.",
    )
    missing_changes: list[dict[str, object]] = Field(
        default_factory=list[dict[str, object]],
        description="Expected changes the run did not make.",
    )
    outcome_ok: bool | None = Field(
        default=None, description="A refusal item ended unsuccessful with an expected code."
    )
    error_code: str | None = Field(default=None, description="The run's error code, if any.")
    ungrounded: list[dict[str, object]] = Field(
        default_factory=list[dict[str, object]], description="Words of the answer no tool gave."
    )
    leaks: list[dict[str, object]] = Field(
        default_factory=list[dict[str, object]], description="Secret tool fields in the answer."
    )

    def is_pass(self) -> bool:
        """Return whether the item passed (see :attr:`passed`)."""
        return self.passed if self.passed is not None else self.final_score >= 1.0


def _seconds(trajectory: Trajectory) -> float | None:
    meta = trajectory.metadata
    if isinstance(meta.get("wall_s"), int | float):
        return round(float(meta["wall_s"]), 3)
    if isinstance(meta.get("execution_time_ms"), int | float):
        return round(float(meta["execution_time_ms"]) / 1000, 3)
    return None


def _errors(trajectory: Trajectory) -> list[str]:
    found = [s.error for s in trajectory.steps if s.error]
    meta = trajectory.metadata
    run = [str(meta[key]) for key in ("run_error", "error") if meta.get(key)]
    return [*run, *found]


def _final(scorer: FinalScorer, output: object, expected: object, request: str) -> float:
    """Return the scorer's score, handing it the item's input when it takes ``inputs``."""
    try:
        takes_input = "inputs" in inspect.signature(scorer).parameters
    except (TypeError, ValueError):
        takes_input = False
    value = scorer(output, expected, inputs=request) if takes_input else scorer(output, expected)  # pyright: ignore[reportCallIssue] -- checked above
    return round(float(value), 4)


def _items(dataset: object) -> list[EvalItem]:
    """Return the items of a dataset object, a dataset dict, a JSON path or a list of items."""
    if isinstance(dataset, EvalDataset):
        return list(dataset.dataset)
    if isinstance(dataset, str | Path):
        return list(load_dataset(dataset).dataset)
    if isinstance(dataset, Mapping) and "dataset" in dataset:
        try:
            return list(EvalDataset.model_validate(dataset).dataset)
        except ValidationError as exc:
            raise ConfigurationError(
                "dataset", f"not a dataset: {exc.errors()[0]['msg']}",
                fix='pass {"dataset": [{"input": ..., ...}]}',
            ) from None  # fmt: skip
    if isinstance(dataset, Sequence) and all(isinstance(i, EvalItem) for i in dataset):
        return list(dataset)
    raise ConfigurationError(
        "dataset",
        f"{type(dataset).__name__} is not a dataset",
        fix="pass an EvalDataset, a dataset dict, the path of a dataset JSON or a list of EvalItem",
    )


def _as_trajectory(value: object, where: str) -> Trajectory:
    if isinstance(value, Trajectory):
        return value
    try:
        return Trajectory.model_validate(value)
    except ValidationError:
        raise ConfigurationError(
            "trajectories", f"{where} is not a trajectory", fix="pass Trajectory objects"
        ) from None


def _by_id(items: list[EvalItem], trajectories: object) -> dict[str, Trajectory]:
    """Return the trajectories keyed by item id: from a mapping, or a list in dataset order."""
    if isinstance(trajectories, Mapping):
        pairs: dict[object, object] = dict(trajectories)
        return {str(k): _as_trajectory(v, f"trajectory {k!r}") for k, v in pairs.items()}
    if isinstance(trajectories, Sequence) and not isinstance(trajectories, str):
        listed: list[object] = list(trajectories)
        if len(listed) != len(items):
            raise ConfigurationError(
                "trajectories", f"{len(listed)} trajectories for {len(items)} items",
                fix="give one trajectory per item, in dataset order, or a mapping of item id",
            )  # fmt: skip
        return {
            item.id: _as_trajectory(t, f"trajectory {n}")
            for n, (item, t) in enumerate(zip(items, listed, strict=True))
        }
    raise ConfigurationError(
        "trajectories",
        f"{type(trajectories).__name__} is neither a mapping nor a list",
        fix="pass {item_id: Trajectory} or a list of trajectories in dataset order",
    )


class _Modes(TypedDict):
    """The matching modes an evaluator passes to the matchers."""

    trajectory_match: TrajectoryMatch
    args_match: ArgsMatch
    overrides: Mapping[str, object] | None


class _Checks(TypedDict):
    """The end-state and outcome fields of an :class:`ItemResult`."""

    error_code: str | None
    outcome_ok: bool | None
    state_ok: bool | None
    unasked_changes: NotRequired[list[dict[str, object]]]
    missing_changes: NotRequired[list[dict[str, object]]]


def _store_and_outcome(wanted: Expectations, trajectory: Trajectory) -> _Checks:
    """Return the end-state and outcome fields of an item's result."""
    meta = trajectory.metadata
    code = meta.get("error") if isinstance(meta.get("error"), str) else None
    checks: _Checks = {"error_code": code, "outcome_ok": None, "state_ok": None}
    if wanted.refusal:
        codes = wanted.expected_error_code
        checks["outcome_ok"] = meta.get("success") is False and (not codes or code in codes)
    if isinstance(meta.get("store_changes"), list):
        verdict = judge_state(meta["store_changes"], wanted)
        checks["state_ok"] = verdict.ok
        checks["unasked_changes"] = verdict.unexpected
        checks["missing_changes"] = verdict.missing
    return checks


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
        coherence_scorer: Scores the coherence of reasoning; default the rule-based
            :func:`~noema_graph.evals.coherence.coherence`, or
            :func:`~noema_graph.evals.coherence.coherence_judge` with a model.
        secret_fields: Per tool, the result fields the learner must not see (the agent's
            ``AgentDefinition.secret_fields``), for the leak scorer.
        example_answers: The agent's worked-example answers (JSON text), whose phrases an
            answer must not copy unless a tool result holds them.

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
        args_overrides: Mapping[str, object] | None = None,
        tools: Mapping[str, Mapping[str, object]] | None = None,
        budget: Budget | None = None,
        check_claims: bool = True,
        coherence_scorer: CoherenceScorer = coherence,
        secret_fields: Mapping[str, Sequence[str]] | None = None,
        example_answers: Sequence[str] = (),
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
        self.coherence_scorer = coherence_scorer
        self.secret_fields = dict(secret_fields or {})
        self.examples = example_phrases(example_answers)

    def score(self, item: EvalItem, trajectory: Trajectory | None) -> ItemResult:
        """Return the scores of one item (all zero and ``missing`` without a trajectory)."""
        agent = item.tag("agent")
        if trajectory is None:
            return ItemResult(
                id=item.id, agent=agent, input=item.input, final_score=0.0, missing=True
            )
        expected = item.expected_trajectory
        match = precision = recall = None
        if expected is not None:
            modes = _Modes(
                trajectory_match=self.trajectory_match,
                args_match=self.args_match,
                overrides=self.args_overrides,
            )
            match = trajectory_matches(trajectory, expected, **modes)
            precision, recall = precision_recall(trajectory, expected, **modes)
        findings = hallucinated_actions(trajectory) if self.check_claims else []
        violations = find_violations(trajectory, tools=self.tools, budget=self.budget)
        output = trajectory.final_output
        wanted = item_expectations(item)
        checks = _store_and_outcome(wanted, trajectory)
        final = _final(self.scorer, output, item.expected_output, item.input)
        if wanted.refusal and item.expected_output is None:
            final = 1.0 if checks["outcome_ok"] else 0.0
        elif item.expected_output is None and (
            wanted.expected_state or wanted.store_unchanged is not None
        ):  # an item that grades only what the run did: its answer is not graded
            final = 1.0
        leaks = [leak.model_dump() for leak in answer_leaks(trajectory, self.secret_fields)]
        words = ungrounded_words(trajectory, examples=self.examples)
        passed = (
            final >= 1.0
            and checks["state_ok"] is not False
            and checks["outcome_ok"] is not False
            and not leaks
        )
        return ItemResult(
            **checks,
            passed=passed,
            leaks=leaks,
            ungrounded=[w.model_dump() for w in words],
            id=item.id,
            agent=agent or trajectory.metadata.get("agent"),
            input=item.input,
            final_output=output,
            errors=_errors(trajectory),
            final_score=final,
            trajectory_score=None if match is None else float(match),
            tool_precision=precision,
            tool_recall=recall,
            violations=[v.model_dump() for v in violations],
            hallucinated_actions=[f.model_dump() for f in findings],
            coherence=self.coherence_scorer(trajectory),
            success=trajectory.metadata.get("success"),
            tokens=trajectory.usage.total_tokens,
            cost_usd=trajectory.usage.cost_usd,
            seconds=_seconds(trajectory),
            prompt_tokens_processed=trajectory.metadata.get("prompt_tokens_processed"),
            prompt_tokens_cached=trajectory.metadata.get("prompt_tokens_cached"),
        )

    def evaluate(
        self,
        dataset: EvalDataset | Mapping[str, object] | str | Path | Sequence[EvalItem],
        trajectories: Mapping[str, Trajectory] | Sequence[Trajectory],
    ) -> dict[str, object]:
        """Score every item against its trajectory.

        Args:
            dataset: An :class:`EvalDataset`, a dataset dict (``{"dataset": [...]}``), the
                path of a dataset JSON file, or a list of :class:`EvalItem`.
            trajectories: ``{item id: Trajectory}``, or a list of trajectories in dataset
                order.

        Returns:
            ``{"results": [ItemResult as dict, ...], "summary": {...}}``; see :func:`summarize`.

        Raises:
            ConfigurationError: An argument of another kind; it names the argument.
        """
        items = _items(dataset)
        by_id = _by_id(items, trajectories)
        results = [self.score(item, by_id.get(item.id)) for item in items]
        return {"results": [r.model_dump() for r in results], "summary": summarize(results)}


def _group(results: Sequence[ItemResult]) -> dict[str, object]:
    ran = [r for r in results if not r.missing]
    costs = [r.cost_usd for r in ran]
    return {
        "items": len(results),
        "scored": len(ran),
        "final_score": _mean([r.final_score for r in ran]),
        "passed": (passed := sum(1 for r in ran if r.is_pass())),
        "pass_rate": round(passed / len(ran), 4) if ran else None,
        "trajectory_score": _mean([r.trajectory_score for r in ran]),
        "tool_precision": _mean([r.tool_precision for r in ran]),
        "tool_recall": _mean([r.tool_recall for r in ran]),
        "violations": sum(len(r.violations) for r in ran),
        "hallucinations": sum(len(r.hallucinated_actions) for r in ran),
        "coherence": _mean([r.coherence for r in ran]),
        "changed_unasked": sum(1 for r in ran if r.unasked_changes),
        "state_failed": sum(1 for r in ran if r.state_ok is False),
        "refusals_failed": sum(1 for r in ran if r.outcome_ok is False),
        "ungrounded": sum(len(r.ungrounded) for r in ran),
        "items_ungrounded": sum(1 for r in ran if r.ungrounded),
        "leaks": sum(1 for r in ran if r.leaks),
        "tokens": sum(r.tokens for r in ran),
        "cost_usd": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
        "seconds_per_item": _mean([r.seconds for r in ran]),
    }


def summarize(results: Sequence[ItemResult | Mapping[str, object]]) -> dict[str, Any]:
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
