"""Pure routing functions and the limit checks they share.

Every function here reads a state mapping (plain dicts work) and an AgentConfig and returns
a decision; nothing reads a clock, a model or a file. Every limit ends the run in
``finalize`` with a typed stop reason, never in an exception.
"""

from __future__ import annotations

import json
from collections.abc import Container, Iterable, Sequence
from functools import lru_cache
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Send

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.grounding import Seen, seen_in
from noema_graph.grounding.reading import with_references
from noema_graph.grounding.recovery import REPEATED_FAILURE, add_failure, last_failure, pending_fix
from noema_graph.grounding.sources import result_data
from noema_graph.state.agent import RouteState
from noema_graph.state.models import (
    LoopGuard,
    ReasoningStep,
    StopReason,
    TaskPlan,
    ToolTime,
    Usage,
)
from noema_graph.state.reducers import fold_items
from noema_graph.tools.concurrency import next_group

# Supersteps left when a router decides to stop: the node it routes to runs one superstep
# later, and finalize itself needs one, plus margin.
STEPS_RESERVED_FOR_FINALIZE = 4

PreModel = Literal["call_model", "reflect", "finalize"]
AfterExecute = Literal["review_tools", "tool_node", "reflect", "execute_step", "finalize"]
AfterReflect = Literal["revise_plan", "execute_step", "finalize"]
Next = Literal["execute_step", "reflect", "finalize"]


def active_seconds(state: RouteState) -> float:
    """Return the run's active time: node time plus tool time (a concurrent group counts once).

    Both are running totals kept in state (``elapsed_s``, ``tool_time``): nothing is rescanned.
    """
    tool_time: ToolTime | None = state.get("tool_time")
    return float(state.get("elapsed_s") or 0.0) + (tool_time.total if tool_time else 0.0)


def run_timeout(config: AgentConfig, context: RunContext | None = None) -> float | None:
    """Return the run's time budget in seconds: the context's override, else the config's."""
    if context is not None and context.timeout_s is not None:
        return context.timeout_s
    return config.timeout_s


def time_left(
    state: RouteState, config: AgentConfig, context: RunContext | None = None
) -> float | None:
    """Return the seconds of active time the run may still spend (None: no time budget)."""
    timeout = run_timeout(config, context)
    return None if timeout is None else max(timeout - active_seconds(state), 0.0)


def tool_signature(step: ReasoningStep) -> str | None:
    """Return a canonical 'name(args)' of a tool step, or None for other steps."""
    if step.kind not in ("tool", "hallucinated_action") or step.action is None:
        return None
    args = json.dumps(step.action.input, sort_keys=True, default=str)
    return f"{step.action.tool}({args})"


def repeat_streak(trace: Sequence[ReasoningStep]) -> tuple[str | None, int]:
    """Return the latest tool call signature and how many times in a row it was made."""
    signature: str | None = None
    streak = 0
    for step in reversed(trace):
        sig = tool_signature(step)
        if sig is None:
            if step.kind in ("thought", "final"):
                break  # a step finished in between: the calls are no longer "in a row"
            continue
        if signature is None:
            signature, streak = sig, 1
        elif sig == signature:
            streak += 1
        else:
            break
    return signature, streak


def loop_state(state: RouteState, config: AgentConfig) -> Literal["ok", "reflect", "stop"]:
    """Classify repeated identical tool calls.

    ``loop_threshold`` identical calls in a row force one reflection; one more identical call
    after that reflection stops the run with ``loop_detected``.
    """
    signature, streak = repeat_streak(state.get("trace") or ())
    if signature is None or streak < config.loop_threshold:
        return "ok"
    guard: LoopGuard | None = state.get("loop_guard")
    if guard is None or guard.signature != signature:
        return "reflect"
    return "stop" if streak > guard.streak else "ok"


def budget_reason(
    state: RouteState, config: AgentConfig, context: RunContext | None = None
) -> StopReason | None:
    """Return the first exhausted limit (cancel, time, tokens, cost, steps, iterations)."""
    ctx = context or RunContext()
    usage: Usage = state.get("usage") or Usage()
    left = time_left(state, config, ctx)
    max_cost = ctx.max_cost_usd if ctx.max_cost_usd is not None else config.max_cost_usd
    remaining = state.get("remaining_steps")
    over_tokens = (
        config.max_total_tokens is not None and usage.total_tokens >= config.max_total_tokens
    )
    over_cost = max_cost is not None and usage.cost_usd is not None and usage.cost_usd >= max_cost
    out_of_steps = remaining is not None and remaining <= STEPS_RESERVED_FOR_FINALIZE
    reason: StopReason | None = None
    if state.get("cancelled") or ctx.aborted():
        reason = "cancelled"
    elif state.get("llm_error"):
        reason = "llm_error"
    elif (hook := state.get("hook_error")) is not None:
        reason = hook.code
    elif (reading := state.get("reading")) is not None and reading.refusal is not None:
        reason = "refused"
    elif left is not None and left <= 0:
        reason = "timeout"
    elif over_tokens or over_cost:
        reason = "budget_exceeded"
    elif out_of_steps or int(state.get("iteration") or 0) >= config.max_iterations:
        reason = "max_iterations"
    return reason


def fix_due(state: RouteState, config: AgentConfig) -> bool:
    """Return True when the latest failed call names a fix the run has not followed yet.

    The fix becomes the next plan step (through reflect and revise_plan) while replans remain.
    """
    trace = state.get("trace") or ()
    if int(state.get("replans") or 0) >= config.max_replans:
        return False
    fix = pending_fix(trace)
    plan: TaskPlan | None = state.get("plan")
    step = plan.current_step if plan is not None else None
    return fix is not None and not (step is not None and step.tool == fix.get("tool"))


def repeated_failure(state: RouteState, config: AgentConfig) -> bool:
    """Return True when the latest call repeated a failed one and no fix is left to follow."""
    failed = last_failure(state.get("trace") or ())
    return (
        failed is not None and failed.error_type == REPEATED_FAILURE and not fix_due(state, config)
    )


def stop_reason(
    state: RouteState, config: AgentConfig, context: RunContext | None = None
) -> StopReason | None:
    """Return why the run must stop now: an exhausted limit or a confirmed loop.

    A call refused because an identical call already failed is a loop too, unless its
    error names a fix the run can still follow.
    """
    reason = budget_reason(state, config, context)
    if reason is None and (loop_state(state, config) == "stop" or repeated_failure(state, config)):
        reason = "loop_detected"
    return reason


def reflection_due(state: RouteState, config: AgentConfig) -> bool:
    """Return True when ``reflection_interval`` iterations passed since the last reflection."""
    iteration = int(state.get("iteration") or 0)
    last = int(state.get("last_reflection_at") or 0)
    return iteration > 0 and iteration - last >= config.reflection_interval


def pending_calls(state: RouteState) -> list[tuple[int, dict[str, Any]]]:
    """Return (position in the message, call) for each unanswered call of the last AI message."""
    messages = state.get("messages") or []
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
        elif isinstance(message, AIMessage):
            calls = enumerate(message.tool_calls)
            return [(i, dict(c)) for i, c in calls if c.get("id") not in answered]
        else:
            break
    return []


def pending_tool_calls(state: RouteState) -> list[dict[str, Any]]:
    """Return the last AI message's tool calls that have no ToolMessage yet."""
    return [call for _, call in pending_calls(state)]


def plan_complete(state: RouteState) -> bool:
    """Return True when the plan exists and is complete."""
    plan: TaskPlan | None = state.get("plan")
    return plan is not None and plan.is_complete


def route_before_model(
    state: RouteState, config: AgentConfig, context: RunContext | None = None
) -> PreModel:
    """Decide whether the model may be called now.

    Routes to: finalize on a limit or a finished plan, reflect when a loop or a periodic
    reflection is due, else call_model.
    """
    if plan_complete(state) or budget_reason(state, config, context) is not None:
        return "finalize"
    loop, fix = loop_state(state, config), fix_due(state, config)  # each read once
    failed = last_failure(state.get("trace") or ())
    if loop == "stop" or (failed is not None and failed.error_type == REPEATED_FAILURE and not fix):
        return "finalize"  # stop_reason's loop_detected, without reading the trace twice
    if fix or loop == "reflect" or reflection_due(state, config):
        return "reflect"
    return "call_model"


def route_next(state: RouteState, config: AgentConfig, context: RunContext | None = None) -> Next:
    """Route after plan, revise_plan or the last tool result of a message.

    Routes to: execute_step when the model may be called, else reflect or finalize.
    """
    decision = route_before_model(state, config, context)
    return "execute_step" if decision == "call_model" else decision


def _tool_group(
    state: RouteState, config: AgentConfig, context: RunContext | None, safe: Container[str]
) -> list[Send] | None:
    """Return the Send of the next group of pending calls, or None (none, or a limit ran out)."""
    pending = pending_calls(state)
    if not pending or budget_reason(state, config, context) is not None:
        return None
    group = next_group(pending, safe, config.max_tool_calls_per_step)
    return tool_sends(state, group, time_left(state, config, context), safe)


def route_after_execute(
    state: RouteState,
    config: AgentConfig,
    context: RunContext | None = None,
    safe: Container[str] = frozenset(),
) -> list[Send] | AfterExecute:
    """Route after execute_step.

    Routes to: review_tools when the config asks for approvals, else the first group of the
    message's tool calls (see :func:`next_group`); otherwise as :func:`route_next`.
    """
    if (
        config.confirms_tools
        and pending_calls(state)
        and budget_reason(state, config, context) is None
    ):
        return "review_tools"
    return _tool_group(state, config, context, safe) or route_next(state, config, context)


def route_after_tools(
    state: RouteState,
    config: AgentConfig,
    context: RunContext | None = None,
    safe: Container[str] = frozenset(),
) -> list[Send] | Next:
    """Route after review_tools or a group of tool calls.

    Routes to: the next group of the message's pending calls (after a review, each with the
    user's decision on it) while no limit ran out; otherwise as :func:`route_next` (calls a
    stop left unanswered are answered by finalize).
    """
    return _tool_group(state, config, context, safe) or route_next(state, config, context)


def _add_human(latest: list[str], message: object) -> None:
    if isinstance(message, HumanMessage):
        latest[0] = message.text


def latest_human_text(messages: Sequence[object]) -> str:
    """Return the text of the last human message (folded as the history grows, not rescanned)."""
    return fold_items(messages, "latest_human", lambda: [""], _add_human, list)[0]


def _add_result(seen: Seen, step: ReasoningStep) -> None:
    """Fold one trace step into ``seen``: a successful call's arguments and result."""
    if step.kind == "tool" and step.status == "ok" and step.action is not None:
        seen.add_json(step.action.input)
        seen.add_json(result_data(step.action.output))


def _copy_seen(seen: Seen) -> Seen:
    return Seen(
        {kind: dict(ids) for kind, ids in seen.ids.items()},
        {kind: dict(names) for kind, names in seen.names.items()},
    )


@lru_cache(maxsize=32)
def _request_seen(request: str) -> Seen:
    """Return ``seen_in(request)``, parsed once per request (read-only: copy it to change it)."""
    return seen_in(request)


def seen_so_far(request: str, trace: Sequence[ReasoningStep] = ()) -> Seen:
    """Return :func:`~noema_graph.grounding.seen_in` of ``request`` and ``trace``, incrementally.

    The trace's tool results are folded once each (:func:`~noema_graph.state.reducers.fold_items`)
    and laid over the request's ids: the same ids, names and order as ``seen_in``, in time
    linear in the run, not quadratic. The value returned is the caller's own.
    """
    found = fold_items(trace, "seen", Seen, _add_result, _copy_seen)
    seen = _copy_seen(_request_seen(request))
    for kind, names in found.names.items():
        for name in names:
            seen.add_name(kind, name)
    for kind, ids in found.ids.items():
        for value, label in ids.items():
            seen.add_id(kind, value, label)
    return seen


def failed_so_far(
    trace: Sequence[ReasoningStep], read_only: Container[str] = ()
) -> dict[str, dict[str, Any]]:
    """Return :func:`~noema_graph.grounding.recovery.failed_calls` of ``trace``, incrementally."""
    key = ("failed", frozenset(read_only) if isinstance(read_only, Iterable) else id(read_only))
    failed = fold_items(
        trace,
        key,
        dict[str, dict[str, Any]],
        lambda into, step: add_failure(into, step, read_only),
        dict,
    )
    return dict(failed)


def grounding_of(state: RouteState, read_only: Container[str] = ()) -> dict[str, Any]:
    """Return what travels with a group of calls so the tool node can refuse bad ones.

    ``reading``: what the request asks (a write it does not back is refused);
    ``seen``: the ids and names the run has seen (request and tool results) by kind;
    ``failed``: the calls that already failed (see
    :func:`~noema_graph.grounding.recovery.failed_calls`). Empty ones are left out. Both are
    folded as the trace grows (:func:`seen_so_far`, :func:`failed_so_far`), not recomputed.
    """
    request = latest_human_text(state.get("messages") or [])
    trace = state.get("trace") or ()
    reading = state.get("reading")
    seen = with_references(seen_so_far(request, trace), reading)
    kinds: dict[str, list[Any]] = {kind: list(values) for kind, values in seen.ids.items()}
    for kind, names in seen.names.items():
        kinds.setdefault(kind, []).extend(names)
    failed = failed_so_far(trace, read_only)
    return {
        **({"reading": reading} if reading is not None else {}),
        **({"seen": kinds, "request": request} if kinds else {}),
        **({"failed": failed} if failed else {}),
    }


def tool_sends(
    state: RouteState,
    group: Sequence[tuple[int, dict[str, Any]]],
    seconds_left: float | None = None,
    read_only: Container[str] = (),
) -> list[Send]:
    """Return the Send that runs ``group``: its calls with their thought and any decision.

    ``seconds_left`` (the run's remaining time budget) travels with the calls, so the tool
    node stops a call in flight when the budget runs out; so do what the run has seen and
    the calls that failed (:func:`grounding_of`).
    """
    messages = state.get("messages") or []
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    thought = last.text if last is not None else ""
    iteration = int(state.get("iteration") or 0)
    run = state.get("run")
    run_id = run.run_id if run is not None else ""
    trace_id = run.trace_id if run is not None else ""
    decisions = state.get("tool_decisions") or {}
    key = f"{iteration}:{group[0][0]}" if group else ""
    grounding = grounding_of(state, read_only) if group else {}
    calls = [
        {
            "tool_call": call,
            "thought": thought,
            "index": index,
            "group": key,
            "round": iteration,
            "run_id": run_id,
            "trace_id": trace_id,
            **({} if seconds_left is None else {"time_left": seconds_left}),
            **({"decision": decisions[call["id"]]} if call.get("id") in decisions else {}),
            **grounding,
        }
        for index, call in group
    ]
    return [Send("tool_node", {"group": key, "calls": calls})] if calls else []


def route_after_reflect(
    state: RouteState, config: AgentConfig, context: RunContext | None = None
) -> AfterReflect:
    """Route on the typed reflection decision, never on text.

    Routes to: finalize on "finish", a finished plan or a limit; revise_plan on "revise"
    while replans remain; else execute_step.
    """
    reflection = state.get("reflection")
    if reflection is None or plan_complete(state):
        return "finalize"
    if reflection.decision == "finish" or stop_reason(state, config, context) is not None:
        return "finalize"
    if reflection.decision == "revise" and int(state.get("replans") or 0) < config.max_replans:
        return "revise_plan"
    return "execute_step"
