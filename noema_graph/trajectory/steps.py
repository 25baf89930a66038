"""Trace entries as trajectory steps (no graph imports: finalize may use this at run time)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta

from noema_graph.state.models import ReasoningStep
from noema_graph.trajectory.schema import StepAction, Trajectory, TrajectoryStep

SKIPPED_KINDS = frozenset({"final"})
"""Trace kinds left out of the steps: the final answer is ``final_output``."""
_ACTION_KINDS = frozenset({"tool", "hallucinated_action"})


def _ended(step: ReasoningStep) -> str:
    return getattr(step, "ended_at", None) or step.timestamp


def _started(step: ReasoningStep) -> str:
    if (started := getattr(step, "started_at", None)) is not None:
        return str(started)
    try:
        end = datetime.fromisoformat(step.timestamp)
    except ValueError:
        return step.timestamp
    return (end - timedelta(milliseconds=step.duration_ms)).isoformat()


def _tool_error(step: ReasoningStep) -> str | None:
    if step.status != "error":
        return None
    output = step.action.output if step.action is not None else None
    if isinstance(output, dict):
        error: object = output.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(output.get("message"), str):
            return str(output["message"])
    return step.observation or step.thought or "error"


def _observation(step: ReasoningStep) -> str | None:
    output = step.action.output if step.action is not None else None
    if output is None or isinstance(output, str):
        return output if output is not None else step.observation
    return json.dumps(output, default=str, ensure_ascii=False)


def step_of(entry: ReasoningStep) -> TrajectoryStep:
    """Return the trajectory step of one trace entry."""
    if entry.kind in _ACTION_KINDS and entry.action is not None:
        return TrajectoryStep(
            thought=entry.thought,
            action=StepAction(tool=entry.action.tool, input=entry.action.input),
            observation=_observation(entry),
            error=_tool_error(entry),
            started_at=_started(entry),
            ended_at=_ended(entry),
        )
    failed = entry.status == "error" and entry.kind in ("error", "limit")
    return TrajectoryStep(
        thought=entry.thought,
        observation=None if failed else entry.observation,
        error=(entry.observation or entry.thought) if failed else None,
        started_at=_started(entry),
        ended_at=_ended(entry),
    )


def trajectory_of(request: str, result: object, trace: Sequence[ReasoningStep]) -> Trajectory:
    """Return a minimal trajectory (steps, kinds, rounds, result) of a trace."""
    kept = [s for s in trace if s.kind not in SKIPPED_KINDS]
    return Trajectory(
        input=request,
        final_output=result,
        steps=[step_of(s) for s in kept],
        metadata={"step_kinds": [s.kind for s in kept], "step_rounds": [s.round for s in kept]},
    )
