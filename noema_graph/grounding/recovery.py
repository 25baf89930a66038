"""Recovery led by the error: the fix a failed call names, and calls not worth repeating.

A tool error may carry its fix as data (``ToolErrorInfo.fix``: the call that fixes the
problem), recorded on the failed call's trace step. :func:`pending_fix` is that fix while it
has not been followed; the graph then makes it the next plan step (reflect and revise_plan,
without a model). :func:`failed_calls` lists the calls that already failed and may not be
sent again unchanged: a call identical to one of them (same tool, same arguments) with no
successful call of a tool that changes data in between is answered at once.
"""

from __future__ import annotations

import json
from collections.abc import Container, Sequence
from typing import Any

from noema_graph.state.models import ReasoningStep

REPEATED_FAILURE = "repeated_failure"
"""``error_type`` of a call refused because an identical call already failed."""


def call_signature(tool: str, args: Any) -> str:
    """Return the canonical ``tool(args)`` of a call (keys sorted)."""
    return f"{tool}({json.dumps(args, sort_keys=True, default=str)})"


def _tool_steps(trace: Sequence[ReasoningStep]) -> list[ReasoningStep]:
    return [s for s in trace if s.kind == "tool" and s.action is not None]


def last_failure(trace: Sequence[ReasoningStep]) -> ReasoningStep | None:
    """Return the latest tool step when it failed, else None."""
    for step in reversed(trace):
        if step.kind == "tool" and step.action is not None:
            return step if step.status == "error" else None
    return None


def pending_fix(trace: Sequence[ReasoningStep]) -> dict[str, Any] | None:
    """Return the fix the latest failed call names, while no call has followed it yet."""
    failed = last_failure(trace)
    if failed is None or not failed.fix:
        return None
    fix_tool = failed.fix.get("tool")
    followed = [
        s
        for s in _tool_steps(trace)
        if s.status == "ok" and s.action is not None and s.action.tool == fix_tool
    ]
    # a fix already made once in this run, and failed again since: following it again
    # would change nothing
    if followed and trace.index(followed[-1]) > _first_failure_index(trace, failed):
        return None
    return dict(failed.fix)


def _first_failure_index(trace: Sequence[ReasoningStep], failed: ReasoningStep) -> int:
    """Return the index of the first failure of the same call as ``failed``."""
    assert failed.action is not None
    signature = call_signature(failed.action.tool, failed.action.input)
    for index, step in enumerate(trace):
        if (
            step.kind == "tool"
            and step.status == "error"
            and step.action is not None
            and call_signature(step.action.tool, step.action.input) == signature
        ):
            return index
    return len(trace)


def failed_calls(
    trace: Sequence[ReasoningStep], read_only: Container[str] = ()
) -> dict[str, dict[str, Any]]:
    """Return the calls that failed since the last successful call of a data-changing tool.

    By signature (:func:`call_signature`): the error the model read and the fix it named.
    Tools in ``read_only`` change no data, so their successful calls clear nothing.
    """
    failed: dict[str, dict[str, Any]] = {}
    for step in trace:
        add_failure(failed, step, read_only)
    return failed


def add_failure(
    failed: dict[str, dict[str, Any]], step: ReasoningStep, read_only: Container[str] = ()
) -> None:
    """Fold one trace step into ``failed`` (:func:`failed_calls`, one step at a time)."""
    if step.kind != "tool" or step.action is None:
        return
    if step.status == "ok":
        if step.action.tool not in read_only:
            failed.clear()
        return
    failed[call_signature(step.action.tool, step.action.input)] = {
        "error": (step.observation or "")[:500],
        "fix": step.fix,
    }


def repeated_failure_text(tool: str, previous: dict[str, Any]) -> str:
    """Return the observation of a call refused because an identical call already failed."""
    fix = previous.get("fix")
    then = (
        f" Its error names the fix: call {fix.get('tool')} first."
        if isinstance(fix, dict)
        else " Change the arguments, or answer from what you have."
    )
    return (
        f"Not executed: an identical {tool} call already failed in this run with: "
        f"{previous.get('error', '')}.{then}"
    )


DOMAIN_CODES = frozenset({"not_found", "invalid_input", "forbidden"})
"""Tool error types that name a domain problem the learner can read and fix."""


def domain_failure(trace: Sequence[ReasoningStep]) -> tuple[str, str] | None:
    """Return ``(code, message)`` of the domain error behind the latest failed call, if any.

    The latest failure may be the loop guard's refusal of a repeat; the error is that of
    the first identical call, in the learner's words where the tool gave them (its
    details' ``plain``, e.g. ``There is no card 250.``).
    """
    failed = last_failure(trace)
    if failed is None or failed.action is None:
        return None
    signature = call_signature(failed.action.tool, failed.action.input)
    for step in _tool_steps(trace):
        action = step.action
        if (
            action is None
            or step.status != "error"
            or step.error_type not in DOMAIN_CODES
            or call_signature(action.tool, action.input) != signature
        ):
            continue
        output: Any = action.output
        error: Any = output.get("error") if isinstance(output, dict) else None
        details: Any = error.get("details") if isinstance(error, dict) else None
        plain = details.get("plain") if isinstance(details, dict) else None
        message = plain or (error.get("message") if isinstance(error, dict) else None)
        return str(step.error_type), str(message or step.observation or "")
    return None
