"""The ``tool_node`` node: run a group of tool calls of the last AI message.

The routers send a message's calls group by group, in message order (see
:func:`~noema_graph.tools.concurrency.next_group`): consecutive concurrency-safe calls run
concurrently in one task, any other call runs alone. Each group is checkpointed when it ends,
so after a crash only unfinished groups run again (a non-idempotent call is always alone, and
the ledger guards it). Every call is answered by exactly one ToolMessage, errors included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from pydantic_core import to_jsonable_python

from noema_graph.context import RunContext, RunScope, run_scope
from noema_graph.effects import Deadline, Steps, bounded, gather
from noema_graph.errors import Cancelled, RunTimeout
from noema_graph.events import ToolCallEnd, ToolCallStart
from noema_graph.grounding import Seen, unseen_reference
from noema_graph.grounding.reading import may_preview, write_refusal, writes
from noema_graph.grounding.recovery import REPEATED_FAILURE, call_signature, repeated_failure_text
from noema_graph.models.grammar import tool_args_schema
from noema_graph.models.normalize import invalid_arguments
from noema_graph.models.plain import plain
from noema_graph.nodes.common import (
    Clock,
    Span,
    ctx,
    emit,
    preview,
    run_position,
    thread_id,
    user_of,
)
from noema_graph.nodes.deps import AgentDeps, NodeRuntime, list_tools
from noema_graph.nodes.hooks import hook_call, on_failure, report, run_hooks
from noema_graph.nodes.human import clarify, confirm_change, rejection, would_change
from noema_graph.nodes.spec import NodeSpec
from noema_graph.state.agent import ToolGroup, ToolTask, ToolUpdate
from noema_graph.state.models import ReasoningStep, StepKind, ToolAction, ToolTime, Usage
from noema_graph.state.outcome import Outcome
from noema_graph.storage.ledger import LedgerStatus, claim, needs_ledger, settle
from noema_graph.tools.arguments import check_arguments
from noema_graph.tools.ask_user import ASK_USER
from noema_graph.tools.injection import injected_of, without
from noema_graph.tools.results import ToolFailure, ToolResult, child_usage

NOT_RUN_CANCELLED = "Not executed: the run was cancelled."
"""The observation of a call the run's cancel stopped before it ran."""
CUT_BY_CANCEL = "Interrupted: the run was cancelled during this call."
"""The observation of a call the run's cancel cut short (it runs again on resume)."""


def _human(task: ToolTask, runtime: NodeRuntime) -> ToolUpdate | None:
    """Answer a call the user rejected, or pause on an ask_user call; None otherwise."""
    decision = task.get("decision")
    if decision is not None and decision.action == "reject":
        return rejection(task)
    if _name(task) == ASK_USER and not ctx(runtime).aborted():
        return clarify(task, runtime)
    return None


def _name(task: ToolTask) -> str:
    """Return the call's tool name as text (the model boundary makes it text already)."""
    return str(task["tool_call"].get("name"))


def _call_id(task: ToolTask) -> str:
    """Return the call's id as text (the model boundary makes it a unique text already)."""
    return str(task["tool_call"].get("id"))


def _refusal(
    task: ToolTask, tools: Mapping[str, BaseTool], deps: AgentDeps, runtime: NodeRuntime
) -> str | None:
    """Return why the call must not run, or None when it may."""
    name = _name(task)
    cap = deps.config.max_tool_calls_per_step
    if ctx(runtime).aborted():
        return NOT_RUN_CANCELLED
    if deps.config.tool_call_overflow == "refuse" and task["index"] >= cap:
        return (
            f"Not executed: at most {cap} tool calls run per step; "
            "repeat this call in the next step if it is still needed."
        )
    if name not in tools:
        return f"Unknown tool {name!r}. Available tools: {', '.join(sorted(tools)) or 'none'}."
    if (problem := invalid_arguments(task["tool_call"])) is not None:
        return (
            f"Not executed: the arguments of {name!r} {problem}. "
            "Call it again with a JSON object of its named arguments."
        )
    return None


def _error_info(message: ToolMessage) -> tuple[str | None, dict[str, Any] | None]:
    """Return a failed call's error type and fix (as data) from its standard result."""
    artifact = message.artifact
    if message.status != "error" or not isinstance(artifact, ToolResult) or artifact.error is None:
        return None, None
    fix = artifact.error.fix
    return artifact.error.type, (fix.model_dump(mode="json") if fix is not None else None)


def _result(
    task: ToolTask,
    message: ToolMessage,
    kind: StepKind,
    span: Span,
    runtime: NodeRuntime,
    error: tuple[str | None, dict[str, Any] | None] | None = None,
) -> ToolUpdate:
    call, seconds = task["tool_call"], span.seconds
    call_id, name = _call_id(task), _name(task)
    status = "error" if message.status == "error" else "ok"
    error_type, fix = error if error is not None else _error_info(message)
    full = message.artifact if message.artifact is not None else message.content
    step = ReasoningStep(
        kind=kind,
        thought=task["thought"],
        action=ToolAction(  # plain: a checkpoint cannot hold 2**70 or an arbitrary object
            tool=name,
            input=plain(call.get("args")),
            output=plain(to_jsonable_python(full, fallback=str)),
        ),
        observation=preview(message.content),
        status=status,
        round=task["round"],
        duration_ms=seconds * 1000,
        call_id=call_id,
        started_at=span.started_at,
        ended_at=span.ended_at,
        error_type=error_type,
        fix=fix,
    )
    emit(
        runtime,
        ToolCallEnd(
            call_id=call_id,
            tool=name,
            status=status,
            output=preview(message.content, 500),
            duration_ms=seconds * 1000,
        ),
        task,
    )
    update: ToolUpdate = {"messages": [message], "trace": [step]}
    if (child := child_usage(message.artifact)) is not None:
        update["usage"] = child
    return update


def _thread(task: ToolTask) -> str:
    return thread_id() or task["run_id"]


def _run_context(runtime: NodeRuntime) -> RunContext:
    """Return the run's context naming its learner (a subagent's run inherits it)."""
    context, user = ctx(runtime), user_of(runtime)
    return context if user is None or context.user_id == user else replace(context, user_id=user)


def _scope(task: ToolTask, runtime: NodeRuntime, *, dry: bool = False) -> RunScope:
    step, checkpoint = run_position()
    return RunScope(
        trace_id=task["trace_id"],
        run_id=task["run_id"],
        context=_run_context(runtime),
        thread_id=_thread(task),
        call_id=_call_id(task),
        step=step,
        checkpoint_id=checkpoint,
        dry_run=dry,
    )


def _injected(
    tool: BaseTool, given: Any, runtime: NodeRuntime
) -> tuple[Any, dict[str, Any], ToolFailure | None]:
    """Split a call's arguments: the model's (its injected ones dropped) and the run's.

    Returns the model's arguments, the injected values, and why the run cannot supply them.
    """
    injected = injected_of(tool)
    if injected is None or not isinstance(given, dict):
        return given, {}, None
    own = without(given, injected.fields)
    try:
        return own, dict(injected.supply(user_of(runtime))), None
    except ToolFailure as failure:
        return own, {}, failure


def _error_message(task: ToolTask, text: str) -> ToolMessage:
    return ToolMessage(text, tool_call_id=_call_id(task), name=_name(task), status="error")


def _as_message(task: ToolTask, output: object) -> ToolMessage:
    if isinstance(output, ToolMessage):
        return output
    return ToolMessage(preview(output, 100_000), tool_call_id=_call_id(task), name=_name(task))


def _failed(task: ToolTask, exc: BaseException) -> ToolMessage:
    return _error_message(task, f"Tool {_name(task)!r} failed: {type(exc).__name__}: {exc}")


def _ledger_status(exc: GraphBubbleUp) -> LedgerStatus:
    """Return the ledger status of a call that raised ``exc`` (paused, or done: a handoff)."""
    return "paused" if isinstance(exc, GraphInterrupt) else "done"


def timeout_of(tool: BaseTool, deps: AgentDeps) -> float | None:
    """Return the call timeout of ``tool``: its ``metadata["timeout_s"]``, else the config's.

    A tool that bounds itself (a subagent, whose run has its own time budget) declares
    ``timeout_s: None``.
    """
    meta = tool.metadata or {}
    return meta.get("timeout_s", deps.config.tool_timeout_s)


def _invoke(
    tool: BaseTool, task: ToolTask, runtime: NodeRuntime, deps: AgentDeps, *, dry: bool = False
) -> Steps[object]:
    """Run the tool within its call timeout and the run's abort switch (``dry``: run dry)."""
    payload = {**task["tool_call"], "type": "tool_call"}
    with run_scope(_scope(task, runtime, dry=dry)):
        return (
            yield bounded(
                lambda: tool.invoke(payload),
                lambda: tool.ainvoke(payload),
                ctx(runtime),
                timeout=timeout_of(tool, deps),
            )
        )


def _run(
    tool: BaseTool, task: ToolTask, runtime: NodeRuntime, deps: AgentDeps, *, dry: bool = False
) -> Steps[ToolMessage]:
    """Run one call under the ledger; every failure the tool may have is an observation.

    A ``dry`` call has no effect to guard: it runs outside the ledger (the same call may
    run for real afterwards, once the learner says yes).
    """
    call, store, thread = task["tool_call"], runtime.store, _thread(task)
    ledger = store if store is not None and not dry and needs_ledger(tool, store) else None
    if ledger is not None and (refusal := (yield from claim(ledger, thread, call))) is not None:
        return _error_message(task, refusal)
    try:
        message = _as_message(task, (yield from _invoke(tool, task, runtime, deps, dry=dry)))
    except GraphBubbleUp as exc:  # interrupt() in a tool pauses the run like ask_user
        if ledger is not None:  # a paused call runs again, from its start, on resume
            yield from settle(ledger, thread, call, _ledger_status(exc))
        raise
    except RunTimeout:
        message = _error_message(
            task, f"Interrupted: the run's time budget ran out during {_name(task)!r}."
        )
    except Deadline:
        timeout = timeout_of(tool, deps)
        message = _error_message(task, f"Tool {_name(task)!r} timed out after {timeout}s.")
    except Cancelled:
        message = _error_message(task, CUT_BY_CANCEL)
    except deps.config.tool_errors as exc:
        message = _failed(task, exc)
    if ledger is not None:
        yield from settle(ledger, thread, call)
    return message


def _hooked(
    task: ToolTask, tools: Mapping[str, BaseTool], runtime: NodeRuntime, deps: AgentDeps
) -> Steps[tuple[ToolUpdate, float]]:
    """Run one call inside the ``tool_node`` hooks: each hook sees this one call."""
    config = deps.config
    call = hook_call(config, "tool_node", task, runtime)
    patch, failure = run_hooks(config, call, "pre_process", None, first=False, final=False)
    if failure is None:
        task = {**task, **patch}  # pyright: ignore[reportAssignmentType]  # a hook may rewrite it
        update, seconds = yield from _one(task, tools, runtime, deps)
        call = hook_call(config, "tool_node", task, runtime)
        update, failure = run_hooks(config, call, "post_process", update, first=False, final=False)
    else:
        update, seconds = ToolUpdate(), 0.0
    if failure is not None:
        report(runtime, task, failure)
        update = on_failure(update, failure, final=False)
    return update, seconds


def _one(
    task: ToolTask, tools: Mapping[str, BaseTool], runtime: NodeRuntime, deps: AgentDeps
) -> Steps[tuple[ToolUpdate, float]]:
    """Run one call of a group; return its update and how long it took."""
    if (answered := _human(task, runtime)) is not None:
        return answered, 0.0
    call, name = task["tool_call"], _name(task)
    emit(runtime, ToolCallStart(call_id=_call_id(task), tool=name, input=call.get("args")), task)
    clock = Clock()
    if (refusal := _refusal(task, tools, deps, runtime)) is not None:
        kind = "hallucinated_action" if name not in tools else "tool"
        span = clock.stop()
        return _result(task, _error_message(task, refusal), kind, span, runtime), span.seconds
    tool = tools[name]
    given, owned, unowned = _injected(tool, call.get("args"), runtime)
    args, invalid = check_arguments(tool, given)
    args = {**args, **owned}  # the run's values, never the model's
    error: tuple[str | None, dict[str, Any] | None] = ("invalid_input", None)
    refusal, refused = _ungrounded(task, tool, args, checked=invalid is None)
    if refusal is not None:
        invalid, error = refusal, refused
    if unowned is not None:
        invalid, error = unowned.message, (unowned.type, None)
    if invalid is not None:
        span = clock.stop()
        message = _error_message(task, invalid)
        return _result(task, message, "tool", span, runtime, error), span.seconds
    task = {**task, "tool_call": {**call, "args": args}}
    if may_preview(task.get("reading"), name):
        message = yield from _previewed(tool, task, runtime, deps)
    else:
        message = yield from _run(tool, task, runtime, deps)
    span = clock.stop()
    return _result(task, message, "tool", span, runtime), span.seconds


def _previewed(
    tool: BaseTool, task: ToolTask, runtime: NodeRuntime, deps: AgentDeps
) -> Steps[ToolMessage]:
    """Run the change an unclear request most likely asks for: dry, or after a yes.

    The call runs dry (it writes nothing; the journal keeps its would-be changes). When the
    run allows questions (``clarify``) the learner is then asked, the question naming those
    changes; on a yes the call runs for real, else the dry result stands, marked declined.
    On resume the node runs again from its start: the dry call too, journaled once.
    """
    dry = yield from _run(tool, task, runtime, deps, dry=True)
    if dry.status == "error" or not deps.config.clarify or ctx(runtime).aborted():
        return dry
    lines = would_change(dry.artifact)
    if confirm_change(task, runtime, _name(task), lines):
        return (yield from _run(tool, task, runtime, deps))
    text = f"Not changed: the learner did not confirm. {dry.content}"
    return ToolMessage(text, tool_call_id=_call_id(task), name=_name(task), artifact=dry.artifact)


def _ungrounded(
    task: ToolTask, tool: BaseTool, args: dict[str, Any], *, checked: bool
) -> tuple[str | None, tuple[str | None, dict[str, Any] | None]]:
    """Refuse a call identical to one that failed, or one referring to an unseen value.

    The reference check applies to ``checked`` arguments only (they passed the schema).
    Returns the refusal (None: the call may run) and the error type and fix to record.
    """
    previous = (task.get("failed") or {}).get(call_signature(tool.name, args))
    if previous is not None:
        fix = previous.get("fix")
        return repeated_failure_text(tool.name, previous), (REPEATED_FAILURE, fix)
    schema = tool_args_schema(tool)
    reading = task.get("reading")
    if checked and (refused := write_refusal(tool, args, reading, schema)):
        return refused, ("invalid_input", None)
    seen = task.get("seen")
    if seen and checked and not (reading is not None and writes(tool)):  # read covers writes
        known = Seen(
            ids={k: {v: None for v in vs if isinstance(v, int)} for k, vs in seen.items()},
            names={k: {v: None for v in vs if isinstance(v, str)} for k, vs in seen.items()},
        )
        refusal = unseen_reference(tool.name, schema, args, known, task.get("request", ""))
        if refusal is not None:
            return refusal, ("invalid_input", None)
    return None, (None, None)


def tool_node(group: ToolGroup, runtime: NodeRuntime, deps: AgentDeps) -> Steps[ToolUpdate]:
    """Run a group of tool calls and answer each with a ToolMessage, in message order.

    Reads: the ToolGroup payload of a Send (one call, or consecutive concurrency-safe calls,
    run concurrently). Writes: messages (one ToolMessage per call), trace (one tool step per
    call, with its start and end time), tool_time (the group's slowest call), usage (of
    subagents). Refused calls (over the cap with ``tool_call_overflow="refuse"``, unknown
    tool, cancelled, rejected by the user) and tool failures of the configured
    ``tool_errors`` types become error observations; the loop continues. An ``ask_user`` call
    pauses the run (``interrupt``) until the caller answers.
    """
    tools = {t.name: t for t in (yield from list_tools(deps))}
    tasks = group["calls"]
    if len(tasks) == 1:
        results = [(yield from _hooked(tasks[0], tools, runtime, deps))]
    else:
        results = yield gather([_hooked(task, tools, runtime, deps) for task in tasks])
    slowest = max((seconds for _, seconds in results), default=0.0)
    update: ToolUpdate = {
        "messages": [m for u, _ in results for m in u.get("messages", [])],
        "trace": [s for u, _ in results for s in u.get("trace", [])],
        "tool_time": ToolTime(group=group["group"], group_max=slowest, total=slowest),
    }
    usages = [u["usage"] for u, _ in results if "usage" in u]
    if usages:
        update["usage"] = sum(usages, Usage())
    failures = [f for u, _ in results if (f := u.get("hook_error")) is not None]
    if failures:
        update["hook_error"] = failures[0]
    return update


def outcome(update: ToolUpdate) -> tuple[Outcome, str]:
    """Classify tool_node's update: clarified, rejected, failed (loop back) or ran."""
    steps = update.get("trace") or []
    messages = update.get("messages") or []
    step: ReasoningStep | None = steps[-1] if steps else None
    message = messages[-1] if messages else None
    if step is not None and step.kind == "clarification":
        return Outcome.CLARIFY, "the user answered"
    if isinstance(message, ToolMessage) and message.status == "error":
        if step is None:
            return Outcome.SKIP, "rejected by the user"
        return Outcome.LOOP_BACK, "error observation"
    return Outcome.SUCCESS, "tool ran"


SPEC = NodeSpec(tool_node, outcome, own_hooks=True)
