"""The ``tool_node`` node: run one tool call of the last AI message.

The router sends one task per tool call (``Send``), so the calls of a step run concurrently
and each finished call is checkpointed on its own: after a crash only unfinished calls run
again. Every call is answered by exactly one ToolMessage, errors included.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.runtime import Runtime
from pydantic import BaseModel

from noema_graph.context import RunScope, run_scope
from noema_graph.errors import Cancelled
from noema_graph.events import ToolCallEnd, ToolCallStart
from noema_graph.nodes.abort import race_abort
from noema_graph.nodes.common import ctx, emit, preview, thread_id
from noema_graph.nodes.deps import AgentDeps
from noema_graph.nodes.human import clarify, rejection
from noema_graph.nodes.ledger import (
    LedgerStatus,
    aclaim,
    asettle,
    claim,
    needs_ledger,
    settle,
)
from noema_graph.state.agent import ToolTask
from noema_graph.state.models import ReasoningStep, ToolAction, Usage
from noema_graph.tools.ask_user import ASK_USER

SUBAGENT_OUTPUT = "agent_output"
"""Artifact key under which a subagent tool reports the child's AgentOutput dict."""


def _human(task: ToolTask, runtime: Runtime[Any]) -> dict[str, Any] | None:
    """Answer a call the user rejected, or pause on an ask_user call; None otherwise."""
    decision = task.get("decision")
    if decision is not None and decision.action == "reject":
        return rejection(task)
    if task["tool_call"]["name"] == ASK_USER and not ctx(runtime).aborted():
        return clarify(task, runtime)
    return None


def _refusal(
    task: ToolTask, tools: dict[str, BaseTool], deps: AgentDeps, runtime: Runtime[Any]
) -> str | None:
    """Return why the call must not run, or None when it may."""
    call = task["tool_call"]
    cap = deps.config.max_tool_calls_per_step
    if ctx(runtime).aborted():
        return "Not executed: the run was cancelled."
    if task["index"] >= cap:
        return (
            f"Not executed: at most {cap} tool calls run per step; "
            "repeat this call in the next step if it is still needed."
        )
    if call["name"] not in tools:
        return (
            f"Unknown tool {call['name']!r}. Available tools: {', '.join(sorted(tools)) or 'none'}."
        )
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if value is None or isinstance(value, str | int | float | bool | list | dict):
        return value
    return str(value)


def _result(
    task: ToolTask, message: ToolMessage, kind: str, seconds: float, runtime: Runtime[Any]
) -> dict[str, Any]:
    call = task["tool_call"]
    status = "error" if message.status == "error" else "ok"
    full = message.artifact if message.artifact is not None else message.content
    step = ReasoningStep(
        kind=kind,  # type: ignore[arg-type]
        thought=task["thought"],
        action=ToolAction(tool=str(call["name"]), input=call.get("args"), output=_jsonable(full)),
        observation=preview(message.content),
        status=status,
        round=task["round"],
        duration_ms=seconds * 1000,
    )
    emit(
        runtime,
        ToolCallEnd(
            call_id=str(call["id"]),
            tool=str(call["name"]),
            status=status,
            output=preview(message.content, 500),
            duration_ms=seconds * 1000,
        ),
        task,
    )
    update: dict[str, Any] = {"messages": [message], "trace": [step]}
    if (child := child_usage(message.artifact)) is not None:
        update["usage"] = child
    return update


def _thread(task: ToolTask) -> str:
    return thread_id() or task["run_id"]


def child_usage(artifact: Any) -> Usage | None:
    """Return the tokens and cost of a subagent run reported in a tool's artifact.

    A tool that runs another agent returns ``{SUBAGENT_OUTPUT: <AgentOutput dict>}`` as its
    artifact; its usage is rolled up into the parent run's usage.
    """
    if not isinstance(artifact, dict) or SUBAGENT_OUTPUT not in artifact:
        return None
    meta = artifact[SUBAGENT_OUTPUT]["metadata"]
    tokens = meta["token_usage"]
    return Usage(
        prompt_tokens=tokens["prompt_tokens"],
        completion_tokens=tokens["completion_tokens"],
        total_tokens=tokens["total_tokens"],
        cost_usd=meta["estimated_cost_usd"],
    )


def _scope(task: ToolTask, runtime: Runtime[Any]) -> RunScope:
    return RunScope(trace_id=task["trace_id"], run_id=task["run_id"], context=ctx(runtime))


def _error_message(task: ToolTask, text: str) -> ToolMessage:
    call = task["tool_call"]
    return ToolMessage(text, tool_call_id=str(call["id"]), name=str(call["name"]), status="error")


def _as_message(task: ToolTask, output: Any) -> ToolMessage:
    if isinstance(output, ToolMessage):
        return output
    call = task["tool_call"]
    return ToolMessage(
        preview(output, 100_000), tool_call_id=str(call["id"]), name=str(call["name"])
    )


def _failed(task: ToolTask, exc: BaseException) -> ToolMessage:
    return _error_message(
        task, f"Tool {task['tool_call']['name']!r} failed: {type(exc).__name__}: {exc}"
    )


def _ledger_status(exc: GraphBubbleUp) -> LedgerStatus:
    """Return the ledger status of a call that raised ``exc`` (paused, or done: a handoff)."""
    return "paused" if isinstance(exc, GraphInterrupt) else "done"


def tool_node(task: ToolTask, runtime: Runtime[Any], *, deps: AgentDeps) -> dict[str, Any]:
    """Run one tool call and answer it with a ToolMessage.

    Reads: the ToolTask payload of a Send. Writes: messages (one ToolMessage), trace (one
    tool step). Refused calls (over the cap, unknown tool, cancelled, rejected by the user)
    and tool exceptions become error observations; the loop continues. An ``ask_user``
    call pauses the run (``interrupt``) until the caller answers.
    """
    if (answered := _human(task, runtime)) is not None:
        return answered
    tools = {t.name: t for t in deps.tool_list()}
    call = task["tool_call"]
    emit(
        runtime,
        ToolCallStart(call_id=str(call["id"]), tool=str(call["name"]), input=call.get("args")),
        task,
    )
    start = time.perf_counter()
    if (refusal := _refusal(task, tools, deps, runtime)) is not None:
        kind = "hallucinated_action" if call["name"] not in tools else "tool"
        return _result(task, _error_message(task, refusal), kind, 0.0, runtime)
    tool, store, thread = tools[call["name"]], runtime.store, _thread(task)
    ledger = store if store is not None and needs_ledger(tool, store) else None
    if ledger is not None and (refusal := claim(ledger, thread, call)) is not None:
        return _result(task, _error_message(task, refusal), "tool", 0.0, runtime)
    try:
        with run_scope(_scope(task, runtime)):
            message = _as_message(task, tool.invoke({**call, "type": "tool_call"}))
    except GraphBubbleUp as exc:  # interrupt() in a tool pauses the run like ask_user
        if ledger is not None:  # a paused call runs again, from its start, on resume
            settle(ledger, thread, call, _ledger_status(exc))
        raise
    # Any tool failure becomes an error observation that names the exception type.
    except Exception as exc:
        message = _failed(task, exc)
    if ledger is not None:
        settle(ledger, thread, call)
    return _result(task, message, "tool", time.perf_counter() - start, runtime)


async def atool_node(task: ToolTask, runtime: Runtime[Any], *, deps: AgentDeps) -> dict[str, Any]:
    """Async twin of :func:`tool_node`, with the per-tool timeout enforced."""
    if (answered := _human(task, runtime)) is not None:
        return answered
    tools = {t.name: t for t in await deps.atool_list()}
    call = task["tool_call"]
    emit(
        runtime,
        ToolCallStart(call_id=str(call["id"]), tool=str(call["name"]), input=call.get("args")),
        task,
    )
    start = time.perf_counter()
    if (refusal := _refusal(task, tools, deps, runtime)) is not None:
        kind = "hallucinated_action" if call["name"] not in tools else "tool"
        return _result(task, _error_message(task, refusal), kind, 0.0, runtime)
    timeout = deps.config.tool_timeout_s
    tool, store, thread = tools[call["name"]], runtime.store, _thread(task)
    ledger = store if store is not None and needs_ledger(tool, store) else None
    if ledger is not None and (refusal := await aclaim(ledger, thread, call)) is not None:
        return _result(task, _error_message(task, refusal), "tool", 0.0, runtime)
    try:
        with run_scope(_scope(task, runtime)):
            output = await race_abort(
                asyncio.wait_for(tool.ainvoke({**call, "type": "tool_call"}), timeout=timeout),
                ctx(runtime),
            )
        message = _as_message(task, output)
    except TimeoutError:
        message = _error_message(task, f"Tool {call['name']!r} timed out after {timeout}s.")
    except Cancelled:
        message = _error_message(task, "Interrupted: the run was cancelled during this call.")
    except GraphBubbleUp as exc:  # interrupt() in a tool pauses the run like ask_user
        if ledger is not None:  # a paused call runs again, from its start, on resume
            await asettle(ledger, thread, call, _ledger_status(exc))
        raise
    # Any tool failure becomes an error observation that names the exception type.
    except Exception as exc:
        message = _failed(task, exc)
    if ledger is not None:
        await asettle(ledger, thread, call)
    return _result(task, message, "tool", time.perf_counter() - start, runtime)
