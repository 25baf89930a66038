"""The ``review_tools`` node: pause for the user's approval of tool calls that need it.

It runs between ``execute_step`` and the ``tool_node`` tasks when the config asks for
approvals (``confirm_tools``, ``confirm_permissions``, ``confirm_non_idempotent``). All the
calls of one step that need approval are asked together in one ``ConfirmRequest``; the
answer is routed to each call by its id.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.messages import AIMessage

from noema_graph.effects import Steps
from noema_graph.nodes.deps import AgentDeps, NodeRuntime, list_tools
from noema_graph.nodes.human import ask_for_decisions, decision_step, pending_approvals
from noema_graph.nodes.routing import pending_tool_calls
from noema_graph.nodes.spec import NodeSpec
from noema_graph.state.agent import AgentState, AgentUpdate
from noema_graph.state.human import Decision
from noema_graph.state.outcome import Outcome


def _edited(state: AgentState, decisions: Mapping[str, Decision]) -> list[AIMessage]:
    """Return the last AI message with edited arguments in place, so history shows what ran."""
    edits = {i: d.args for i, d in decisions.items() if d.action == "edit"}
    message = (state.get("messages") or [None])[-1]
    if not edits or not isinstance(message, AIMessage):
        return []
    calls = [{**c, "args": edits.get(c["id"] or "", c["args"]) or {}} for c in message.tool_calls]
    return [message.model_copy(update={"tool_calls": calls})]


def review_tools(state: AgentState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AgentUpdate]:
    """Ask the user to approve, reject or edit the pending calls that need approval.

    Reads: messages (the last AI message's calls). Writes: tool_decisions (by call id),
    messages (the AI message with edited arguments), trace (one approval step per call).
    Pauses with ``interrupt(ConfirmRequest)`` until the caller resumes.
    """
    tools = yield from list_tools(deps)
    calls = pending_tool_calls(state)
    pending = pending_approvals(calls, {t.name: t for t in tools}, deps.config)
    if not pending:
        return {"tool_decisions": {}}
    decisions = ask_for_decisions(runtime, state, pending)
    round_ = int(state.get("iteration") or 0)
    return {
        "tool_decisions": decisions,
        "messages": _edited(state, decisions),
        "trace": [decision_step(p, decisions[p.id], round_) for p in pending],
    }


def outcome(update: AgentUpdate) -> tuple[Outcome, str]:
    """Classify review_tools' update by the decisions taken."""
    decisions: Mapping[str, Decision] = update.get("tool_decisions") or {}
    if not decisions:
        return Outcome.SKIP, "no call needs approval"
    counts = [d.action for d in decisions.values()]
    return Outcome.CONFIRM, ", ".join(f"{a}: {counts.count(a)}" for a in sorted(set(counts)))


SPEC = NodeSpec(review_tools, outcome)
