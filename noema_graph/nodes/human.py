"""Human in the loop: which calls need approval, reading answers, the ask_user pause.

Also the question before an unclear request's change (:func:`confirm_change`). The graph
pauses with LangGraph's ``interrupt()``; a node that pauses runs again from its start when
the caller resumes, so everything before ``interrupt()`` here is pure (a dry call that
precedes the question is journaled once).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import interrupt

from noema_graph.config import AgentConfig
from noema_graph.errors import HumanInputError
from noema_graph.events import HumanInputRequested
from noema_graph.nodes.common import emit
from noema_graph.nodes.deps import NodeRuntime
from noema_graph.state.agent import AgentState, ToolTask, ToolUpdate
from noema_graph.state.human import (
    ClarifyRequest,
    ConfirmRequest,
    Decision,
    PendingCall,
    parse_decisions,
)
from noema_graph.state.models import ReasoningStep, ToolAction
from noema_graph.tools.results import ToolResult

NO_ANSWER = "(The user gave no answer: go on with your best assumption and say what it was.)"


def approval_reason(
    call: Mapping[str, Any], tool: BaseTool | None, config: AgentConfig
) -> str | None:
    """Return why ``call`` needs the user's approval under ``config``, or None when it does not.

    Calls to unknown tools need none (tool_node refuses them anyway).
    """
    name = str(call["name"])
    if tool is None:
        return None
    meta = tool.metadata or {}
    permission = meta.get("permission")
    if name in config.confirm_tools:
        return f"{name} is listed in confirm_tools"
    if permission is not None and permission in config.confirm_permissions:
        return f"{name} needs the {permission} permission"
    if config.confirm_non_idempotent and meta.get("idempotency") == "non_idempotent":
        return f"{name} has an effect that must not be repeated (non-idempotent)"
    return None


def pending_approvals(
    calls: Sequence[Mapping[str, Any]], tools: Mapping[str, BaseTool], config: AgentConfig
) -> list[PendingCall]:
    """Return the calls of a step that wait for approval, in call order."""
    pending: list[PendingCall] = []
    for call in calls:
        reason = approval_reason(call, tools.get(str(call["name"])), config)
        if reason is not None:
            pending.append(
                PendingCall(
                    id=str(call["id"]),
                    name=str(call["name"]),
                    args=dict(call.get("args") or {}),
                    reason=reason,
                )
            )
    return pending


def ask_for_decisions(
    runtime: NodeRuntime, state: AgentState, pending: Sequence[PendingCall]
) -> dict[str, Decision]:
    """Pause until the caller answers every pending call; re-ask when an answer is invalid."""
    request = ConfirmRequest(calls=tuple(pending))
    while True:
        payload = request.model_dump(mode="json")
        emit(runtime, HumanInputRequested(kind="confirm", request=payload), state)
        answer = interrupt(payload)
        try:
            return parse_decisions(answer, pending)
        except HumanInputError as exc:
            request = request.model_copy(update={"error": str(exc)})


def decision_step(call: PendingCall, decision: Decision, round_: int) -> ReasoningStep:
    """Return the trace entry recording the user's decision on ``call``."""
    text = {
        "approve": "approved by the user",
        "reject": f"rejected by the user{': ' + decision.reason if decision.reason else ''}",
        "edit": f"edited by the user: run with {json.dumps(decision.args, default=str)}",
    }[decision.action]
    return ReasoningStep(
        kind="approval",
        thought=f"{call.name} needs approval: {call.reason}",
        action=ToolAction(tool=call.name, input=call.args, output=decision.model_dump(mode="json")),
        observation=text,
        round=round_,
    )


def rejection(task: ToolTask) -> ToolUpdate:
    """Answer a call the user rejected (the decision is already in the trace)."""
    call, decision = task["tool_call"], task.get("decision")
    why = f" Reason: {decision.reason}" if decision is not None and decision.reason else ""
    text = f"Not executed: the user rejected this call.{why} Do not repeat it; adapt instead."
    return {
        "messages": [
            ToolMessage(text, tool_call_id=str(call["id"]), name=str(call["name"]), status="error")
        ]
    }


def answer_text(answer: object) -> str:
    """Return a clarify answer as text (blank answers tell the model to assume)."""
    if answer is None:
        return NO_ANSWER
    text = answer if isinstance(answer, str) else json.dumps(answer, default=str)
    return text.strip() or NO_ANSWER


def clarify(task: ToolTask, runtime: NodeRuntime) -> ToolUpdate:
    """Pause with the model's question; the caller's answer becomes the observation."""
    call = task["tool_call"]
    question = str((call.get("args") or {}).get("question") or "").strip()
    call_id, name = str(call["id"]), str(call["name"])
    if not question:
        text = "ask_user needs a non-empty 'question' argument."
        return {"messages": [ToolMessage(text, tool_call_id=call_id, name=name, status="error")]}
    payload = ClarifyRequest(call_id=call_id, question=question).model_dump(mode="json")
    emit(runtime, HumanInputRequested(kind="clarify", request=payload), task)
    text = answer_text(interrupt(payload))
    step = ReasoningStep(
        kind="clarification",
        thought=question,
        action=ToolAction(tool=name, input={"question": question}, output=text),
        observation=text,
        round=task["round"],
        call_id=call_id,
    )
    return {"messages": [ToolMessage(text, tool_call_id=call_id, name=name)], "trace": [step]}


AGREED = frozenset({"yes", "y", "ok", "okay", "sure", "confirm", "confirmed", "oui", "si", "vale"})
"""First words of an answer that say yes (English, French, Spanish; accents folded)."""


def agreed(answer: object) -> bool:
    """Return whether a clarify answer says yes: its first word is one of :data:`AGREED`."""
    folded = unicodedata.normalize("NFKD", answer_text(answer).casefold())
    words = re.findall(r"[a-z]+", "".join(c for c in folded if not unicodedata.combining(c)))
    return bool(words) and words[0] in AGREED


def would_change(artifact: object) -> list[str]:
    """Return a dry call's would-be changes (its result's ``would_change`` lines), else []."""
    data = artifact.data if isinstance(artifact, ToolResult) else None
    lines = (data or {}).get("would_change")
    return [str(line) for line in lines] if isinstance(lines, list) else []


def confirm_change(task: ToolTask, runtime: NodeRuntime, tool: str, lines: Sequence[str]) -> bool:
    """Pause with a question naming the change ``tool`` would make; return the learner's yes.

    The request did not clearly ask for it (an uncertain intent decision), so the run asks
    before it writes; the answer is free text, and only a yes (:func:`agreed`) writes.
    """
    change = "; ".join(lines) if lines else f"run {tool}, which changes your data"
    question = (
        f"Your request may be asking me to change your data: {change}. "
        "Should I make this change? Answer yes or no."
    )
    payload = ClarifyRequest(call_id=str(task["tool_call"]["id"]), question=question)
    request = payload.model_dump(mode="json")
    emit(runtime, HumanInputRequested(kind="clarify", request=request), task)
    return agreed(interrupt(request))
