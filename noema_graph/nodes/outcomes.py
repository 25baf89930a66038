"""Classify a node's update as a typed :class:`~noema_graph.state.outcome.Outcome`.

Pure: reads the node name and the update only. The node wrapper adds the result to every
update in the ``outcome`` channel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from noema_graph.state.human import Decision
from noema_graph.state.models import HookFailure, ReasoningStep, Reflection
from noema_graph.state.outcome import NodeOutcome, Outcome, run_outcome


def _last(items: Sequence[Any] | None) -> Any:
    return items[-1] if items else None


def _execute(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    if update.get("cancelled"):
        return Outcome.TERMINATE, "cancelled"
    if update.get("llm_error"):
        return Outcome.ERROR, str(update["llm_error"])
    if "iteration" not in update:
        return Outcome.SKIP, "a limit, a loop or a reflection takes over"
    message = _last(update.get("messages"))
    if isinstance(message, AIMessage) and message.tool_calls:
        return Outcome.LOOP_BACK, f"tool calls: {len(message.tool_calls)}"
    return Outcome.SUCCESS, "step answered"


def _tool(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    step: ReasoningStep | None = _last(update.get("trace"))
    message = _last(update.get("messages"))
    if step is not None and step.kind == "clarification":
        return Outcome.CLARIFY, "the user answered"
    if isinstance(message, ToolMessage) and message.status == "error":
        if step is None:
            return Outcome.SKIP, "rejected by the user"
        return Outcome.LOOP_BACK, "error observation"
    return Outcome.SUCCESS, "tool ran"


def _review(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    decisions: Mapping[str, Decision] = update.get("tool_decisions") or {}
    if not decisions:
        return Outcome.SKIP, "no call needs approval"
    counts = [d.action for d in decisions.values()]
    return Outcome.CONFIRM, ", ".join(f"{a}: {counts.count(a)}" for a in sorted(set(counts)))


def _reflect(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    reflection: Reflection | None = update.get("reflection")
    if reflection is None:
        return Outcome.SKIP, "no reflection"
    if reflection.decision == "revise":
        return Outcome.REPLAN, reflection.reason
    return Outcome.SUCCESS, reflection.decision


def _final(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    output = update.get("output") or {}
    error = output.get("error") or {}
    code = error.get("code")
    outcome = run_outcome(
        success=bool(output.get("success")), validated=output.get("validated"), code=code
    )
    return outcome, code or "finished"


_RULES = {
    "execute_step": _execute,
    "tool_node": _tool,
    "review_tools": _review,
    "reflect": _reflect,
    "finalize": _final,
    "generate_answer": _final,
}


def classify(node: str, update: Mapping[str, Any]) -> NodeOutcome:
    """Return the typed outcome of ``node``'s ``update``."""
    failure: HookFailure | None = update.get("hook_error")
    if failure is not None and node not in ("finalize", "generate_answer"):
        kind = Outcome.TERMINATE if failure.code == "hook_veto" else Outcome.ERROR
        return NodeOutcome(node=node, outcome=kind.value, detail=failure.message)
    if node == "revise_plan":
        return NodeOutcome(node=node, outcome=Outcome.REPLAN.value, detail="plan revised")
    rule = _RULES.get(node)
    kind, detail = rule(update) if rule is not None else (Outcome.SUCCESS, "")
    return NodeOutcome(node=node, outcome=kind.value, detail=detail[:200])
