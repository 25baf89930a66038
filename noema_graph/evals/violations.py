"""Rule violations found in a trajectory.

Rules:

* ``unknown_tool``: a call to a tool the agent does not have (from ``tools`` when given,
  else from the runner's "Unknown tool" refusal);
* ``invalid_input``: arguments that fail the tool's JSON schema (from ``tools``), or a call
  the tool refused with an ``invalid_input`` error;
* ``loop``: the same call (tool and arguments) repeated after it succeeded, with the same
  observation as before: nothing new was learned;
* ``retry_without_change``: the same call repeated after it failed;
* ``limit``: the run ended on a limit (iterations, time, budget, loop guard), or exceeded a
  :class:`Budget` given to the evaluator;
* ``run_error``: the run itself raised (recorded by the runner in ``metadata["run_error"]``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field

from noema_graph.evals.matching import arguments
from noema_graph.trajectory.schema import Trajectory, load_json

Rule = Literal[
    "unknown_tool", "invalid_input", "loop", "retry_without_change", "limit", "run_error"
]
LIMIT_REASONS = frozenset({"max_iterations", "timeout", "budget_exceeded", "loop_detected"})
_UNKNOWN_TOOL = "Unknown tool"


class Violation(BaseModel):
    """One broken rule, at a step (index into ``trajectory.steps``) or for the whole run."""

    model_config = ConfigDict(frozen=True)

    rule: Rule
    step: int | None = Field(default=None, description="Index of the step; None: the run.")
    detail: str


class Budget(BaseModel):
    """Limits a run should stay within (None: not checked)."""

    model_config = ConfigDict(frozen=True)

    max_tool_calls: int | None = None
    max_steps: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None


def _signature(tool: str, args: dict[str, object]) -> str:
    return tool + json.dumps(args, sort_keys=True, default=str)


def _refused_as_invalid(observation: str | None) -> bool:
    if not observation:
        return False
    value = load_json(observation)
    if value is None:
        return '"invalid_input"' in observation
    error: object = value.get("error") if isinstance(value, dict) else None
    return isinstance(error, dict) and error.get("type") == "invalid_input"


def _schema_errors(schema: Mapping[str, object], args: dict[str, Any]) -> str | None:
    validator = jsonschema.Draft202012Validator(dict(schema))
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    where = ".".join(str(p) for p in first.absolute_path) or "arguments"
    return f"{where}: {first.message}"


def _call_violations(
    trajectory: Trajectory, tools: Mapping[str, Mapping[str, object]] | None
) -> list[Violation]:
    found: list[Violation] = []
    seen: dict[str, tuple[str | None, str | None]] = {}  # signature -> (observation, error)
    for index, step in enumerate(trajectory.steps):
        if step.action is None:
            continue
        tool, args = step.action.tool, arguments(step.action)
        refused_unknown = step.error is not None and step.error.startswith(_UNKNOWN_TOOL)
        if (tools is not None and tool not in tools) or refused_unknown:
            found.append(Violation(rule="unknown_tool", step=index, detail=f"no tool {tool!r}"))
        elif tools is not None and (problem := _schema_errors(tools[tool], args)):
            found.append(Violation(rule="invalid_input", step=index, detail=f"{tool}: {problem}"))
        elif step.error is not None and _refused_as_invalid(step.observation or step.error):
            found.append(
                Violation(rule="invalid_input", step=index, detail=f"{tool}: {step.error}")
            )
        signature = _signature(tool, args)
        if signature in seen:
            observation, error = seen[signature]
            if error is not None:
                found.append(
                    Violation(
                        rule="retry_without_change",
                        step=index,
                        detail=f"{tool} called again with the same arguments after: {error[:120]}",
                    )
                )
            elif observation == step.observation:
                found.append(
                    Violation(
                        rule="loop", step=index, detail=f"{tool} repeated with the same result"
                    )
                )
        seen[signature] = (step.observation, step.error)
    return found


def _budget_violations(trajectory: Trajectory, budget: Budget) -> list[Violation]:
    checks: list[tuple[str, float | None, float | None]] = [
        ("tool calls", len(trajectory.tool_calls()), budget.max_tool_calls),
        ("steps", len(trajectory.steps), budget.max_steps),
        ("tokens", trajectory.usage.total_tokens, budget.max_total_tokens),
        ("cost USD", trajectory.usage.cost_usd, budget.max_cost_usd),
    ]
    return [
        Violation(rule="limit", detail=f"{name}: {used} over the budget of {limit}")
        for name, used, limit in checks
        if limit is not None and used is not None and used > limit
    ]


def find_violations(
    trajectory: Trajectory,
    *,
    tools: Mapping[str, Mapping[str, object]] | None = None,
    budget: Budget | None = None,
) -> list[Violation]:
    """Return the rule violations of ``trajectory`` (see the module docstring).

    Args:
        trajectory: The run.
        tools: The agent's tools, name -> JSON schema of the arguments; None: unknown
            tools and invalid inputs are read from the refusals recorded in the steps.
        budget: Limits to check the run's calls, steps, tokens and cost against.
    """
    found = _call_violations(trajectory, tools)
    reason = trajectory.metadata.get("stop_reason")
    if reason in LIMIT_REASONS:
        found.append(Violation(rule="limit", detail=f"the run stopped: {reason}"))
    if budget is not None:
        found += _budget_violations(trajectory, budget)
    if error := trajectory.metadata.get("run_error"):
        found.append(Violation(rule="run_error", detail=str(error)[:300]))
    return found
