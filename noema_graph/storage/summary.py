"""The run summary a checkpoint carries in its metadata, so listing skips decoding it.

A leaf of the storage layer: the savers write it at each step, inspection reads it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NotRequired, cast

from typing_extensions import TypedDict

from noema_graph.state.outcome import FINISHED

SUMMARY_KEY = "noema"
"""Checkpoint metadata key of :func:`run_summary` (written by the core at each step)."""


class RunSummary(TypedDict):
    """What :func:`run_summary` writes (``writer``: the savers add the process's identity)."""

    node: str | None
    iteration: int
    tokens: int
    cost: float | None
    plan_step: str | None
    status: str
    error: str | None
    writer: NotRequired[dict[str, object]]


def run_summary(values: Mapping[str, object]) -> RunSummary:
    """Summarise a checkpoint's channel values for its metadata (key :data:`SUMMARY_KEY`).

    What listing needs, as JSON-ready values: ``node`` (the node whose outcome is latest),
    ``iteration``, ``tokens``, ``cost``, ``plan_step``, ``status`` (running, done or failed; a
    pending interrupt makes a thread paused at read time) and ``error``. When a checkpoint's
    metadata holds this dict, :func:`threads` and :func:`history` use it and skip decoding the
    checkpoint blob.
    """
    usage = values.get("usage")
    output = values.get("output") or {}
    outcome = values.get("outcome")
    status = "running"
    error: object = values.get("llm_error")
    if getattr(outcome, "node", None) == "finalize":
        if output:
            final_error = output.get("error") if isinstance(output, Mapping) else None
        else:  # a checkpoint without its delta channels: finalize's outcome names the code
            detail = getattr(outcome, "detail", "")
            final_error = None if detail == FINISHED else {"code": detail}
        status = "failed" if final_error else "done"
        error = final_error or error
    return {
        "node": getattr(outcome, "node", None),
        "iteration": int(cast("int | None", values.get("iteration")) or 0),  # the state's int
        "tokens": int(getattr(usage, "total_tokens", 0) or 0),
        "cost": getattr(usage, "cost_usd", None) if usage is not None else None,
        "plan_step": _plan_step(values.get("plan")),
        "status": status,
        "error": _error_text(error),
    }


def _plan_step(plan: object) -> str | None:
    steps = getattr(plan, "steps", None)
    if not steps:
        return None
    index = int(getattr(plan, "current_step_index", 0))
    if index >= len(steps):
        return f"{len(steps)}/{len(steps)} (complete)"
    return f"{index + 1}/{len(steps)}: {steps[index].description}"


def _error_text(error: object) -> str | None:
    if error is None or error == "":
        return None
    if isinstance(error, Mapping):
        parts = [str(error.get(key)) for key in ("code", "message") if error.get(key)]
        return ": ".join(parts) or json.dumps(error, default=str)
    return str(getattr(error, "message", error))
