"""The ``execute_step`` node: one ReAct turn on the current plan step."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import uuid4

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from typing_extensions import TypedDict

from noema_graph.config import AgentConfig
from noema_graph.effects import Steps
from noema_graph.errors import Cancelled, LLMError
from noema_graph.events import Compaction, ErrorEvent, Thinking
from noema_graph.grounding import seen_in
from noema_graph.grounding.reading import offered, with_references
from noema_graph.models.grammar import bind_react_grammar
from noema_graph.models.repetition import trim_repetition
from noema_graph.nodes.common import (
    TRUNCATED,
    emit,
    latest_request,
    plan_text,
    results_text,
    stopwatch,
    tools_text,
)
from noema_graph.nodes.common import system as system_message
from noema_graph.nodes.compaction import fit_context
from noema_graph.nodes.deps import AgentDeps, ChatRunnable, NodeRuntime, list_tools
from noema_graph.nodes.llm import as_ai_message, call_model, usage_of, used_call_ids
from noema_graph.nodes.output import grounded
from noema_graph.nodes.plan_steps import (
    holding,
    narrowed,
    planned,
    planned_call_message,
    planned_turn,
    spread_calls,
    steps_done,
)
from noema_graph.nodes.routing import pending_tool_calls, seen_so_far
from noema_graph.nodes.spec import NodeSpec
from noema_graph.nodes.step_observations import step_keys, trimmed
from noema_graph.prompts import (
    EXECUTE,
    OBSERVATION_NUDGE,
    REACT,
    REACT_SHOWN,
    react_hints,
)
from noema_graph.protocols.react import parse_response
from noema_graph.protocols.react_guard import feeds_own_result, observation_answer
from noema_graph.state.agent import AgentState, AgentUpdate
from noema_graph.state.models import ReasoningStep, TaskPlan
from noema_graph.state.outcome import Outcome

ANSWER_ONLY_NOTE = (
    "\nTools are not available for this turn: you repeated the same call without progress. "
    "Answer the current step now from the observations you already have."
)
ANSWER_NOW_NOTE = (
    "\nTools are not available for this turn: the observations above hold what you need. "
    "Answer the current step now from them."
)
ANSWER_NOW_CHARS = 300
"""Most characters of the step result an answer-only turn of ``answer_after_tool_results``
writes on a grammar-bound model: the final answer is written from the observations."""
FED_BACK = "would only repeat the last call or feed it its own result; that result is the answer."
"""Follows the call in the thought recorded when the call is replaced by that result."""
INTERRUPTED = (
    "No result was recorded for this call: the run was interrupted before it finished. "
    "Call the tool again if you still need it."
)


def dangling_answers(state: AgentState) -> list[ToolMessage]:
    """Answer tool calls left without a ToolMessage (a crash between call and result)."""
    return [
        ToolMessage(INTERRUPTED, tool_call_id=str(c["id"]), name=str(c["name"]), status="error")
        for c in pending_tool_calls(state)
    ]


def answer_only_note(state: AgentState, config: AgentConfig) -> str | None:
    """Return why this turn offers no tools, or None when it offers them.

    A loop (the ``answer_only`` flag) or, with ``answer_after_tool_results``, enough
    successful tool results in this run make the turn answer-only.
    """
    if state.get("answer_only"):
        return ANSWER_ONLY_NOTE
    if config.answer_after_tool_results is not None and grounded(state.get("trace") or [], config):
        return ANSWER_NOW_NOTE
    return None


def _step_model(
    state: AgentState,
    deps: AgentDeps,
    tools: list[BaseTool],
    schemas: Mapping[str, dict[str, Any]] | None = None,
) -> ChatRunnable:
    """Return the model for this turn; an answer-after-tools turn gets a short answer."""
    if deps.protocol == "react" and answer_only_note(state, deps.config) is ANSWER_NOW_NOTE:
        return bind_react_grammar(deps.model, [], max_answer_chars=ANSWER_NOW_CHARS)
    return deps.step_model(tools, schemas)


def _offer(
    state: AgentState, deps: AgentDeps, tools: list[BaseTool]
) -> tuple[list[BaseTool], dict[str, dict[str, Any]] | None, list[dict[str, Any]]]:
    """Return this turn's tools, their narrowed schemas and the determined calls, if any.

    The write tools the request's reading does not ask for are not offered. The schemas are
    narrowed to what the run has seen (for the grammar); the calls are those of a plan step
    whose arguments are all determined (the model is not asked).
    """
    reading = state.get("reading")
    tools = offered(tools, reading)
    if not tools:
        return tools, None, []
    plan, trace = state.get("plan"), state.get("trace") or []
    request = latest_request(state.get("messages", []))
    step = plan.current_step if plan is not None else None
    if step is not None and step.tool:
        turn = planned_turn(step, tools, request, trace, reading)
        if turn.tools:
            calls = list(turn.calls) or ([turn.call] if turn.call is not None else [])
            return turn.tools, turn.schemas, calls
    if deps.protocol != "react":
        return tools, None, []
    seen = (
        with_references(seen_in(request), reading),
        with_references(seen_so_far(request, trace), reading),
    )
    schemas = narrowed(tools, request, trace, seen=seen)
    return tools, {name: a.schema for name, a in schemas.items()}, []


NEXT_STEP = "Now do step"
"""Opens the turn that hands a new plan step to the model (not the user's request)."""


class StepFields(TypedDict):
    """The current step as the step prompts name it."""

    goal: str
    plan: str
    step_number: int
    step_count: int
    step: str
    results: str


def _step_fields(plan: TaskPlan | None) -> StepFields:
    step = plan.current_step if plan else None
    return {
        "goal": plan.goal if plan else "",
        "plan": plan_text(plan),
        "step_number": (plan.current_step_index + 1) if plan else 1,
        "step_count": len(plan.steps) if plan else 1,
        "step": step.description if step else "Answer the request.",
        "results": results_text(plan),
    }


def _request_text(messages: Sequence[AnyMessage], fields: StepFields) -> str:
    """Return the user's latest request (not a next-step turn); else the plan's goal."""
    requests = (m.text for m in reversed(messages) if isinstance(m, HumanMessage))
    return next((r for r in requests if not r.startswith(NEXT_STEP)), "") or fields["goal"]


def _react_history(
    messages: list[AnyMessage], keep: frozenset[str] | None = None
) -> list[BaseMessage]:
    """Render tool traffic as text turns, for models without native tool calling.

    Each observation shows the ``keep`` fields of its result (:func:`trimmed`; None: all).
    """
    history: list[BaseMessage] = []
    last = len(messages) - 1
    for position, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            nudge = f"\n{OBSERVATION_NUDGE}" if position == last else ""
            shown = trimmed(message.text, keep)
            history.append(HumanMessage(f"Observation: {shown}{nudge}"))
        elif isinstance(message, AIMessage):
            lines = [f"Thought: {message.text}"] if message.tool_calls else [message.text]
            for call in message.tool_calls:
                lines += [f"Action: {call['name']}", f"Action Input: {json.dumps(call['args'])}"]
            history.append(AIMessage(content="\n".join(lines)))
        elif not isinstance(message, SystemMessage):
            history.append(message)
    return history


def _results_once(plan: TaskPlan | None, messages: Sequence[AnyMessage]) -> str:
    """Return the completed steps' results; one the conversation holds is only named.

    A tool step's result is the start of its observation, a step the model answered is
    its answer: both are in the ReAct history, which shows them (trimmed) below.
    """
    done = plan.completed_results() if plan else []
    if not done:
        return results_text(plan)
    texts = [m.text for m in messages if isinstance(m, ToolMessage | AIMessage)]
    lines: list[str] = []
    for description, result in done:
        start = result.partition(TRUNCATED)[0]
        shown = bool(start) and any(t.startswith(start) for t in texts)
        lines.append(f"- {description}: {REACT_SHOWN if shown else result}")
    return "\n".join(lines)


def _react_system(
    state: AgentState,
    deps: AgentDeps,
    tools: list[BaseTool],
    messages: list[AnyMessage],
    fields: StepFields,
) -> str:
    """Return the ReAct step prompt's system text (after the agent's instructions)."""
    return REACT.render(
        agent_name=deps.config.name,
        tools=tools_text(tools),
        hints=react_hints([t.name for t in tools], _request_text(messages, fields)),
        extra=answer_only_note(state, deps.config) or "",
        goal=fields["goal"],
        step_number=fields["step_number"],
        step_count=fields["step_count"],
        step=fields["step"],
        results=_results_once(state.get("plan"), messages),
    )


def build_prompt(
    state: AgentState, deps: AgentDeps, tools: list[BaseTool], extra: list[ToolMessage]
) -> list[BaseMessage]:
    """Return the prompt for the current step in the configured protocol."""
    fields = _step_fields(state.get("plan"))
    messages: list[AnyMessage] = [*state.get("messages", []), *extra]
    if messages and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:
        # the previous step ended with an answer: hand the turn back to the user side
        messages.append(HumanMessage(f"{NEXT_STEP} {fields['step_number']}: {fields['step']}"))
    if deps.protocol == "react":
        system = _react_system(state, deps, tools, messages, fields)
        plan = state.get("plan")
        keep = step_keys(tools, plan.steps[plan.current_step_index :] if plan else ())
        return [system_message(deps.config.instructions, system), *_react_history(messages, keep)]
    note = answer_only_note(state, deps.config) or ""
    system = EXECUTE.render(agent_name=deps.config.name, extra=note, **fields)
    return [system_message(deps.config.instructions, system), *messages]


def step_prefix(
    prompt: Sequence[BaseMessage], deps: AgentDeps, tools: Sequence[BaseTool]
) -> str | None:
    """Return the ReAct step prompt's stable prefix: its system message up to the hints.

    The agent's whole instructions (worked examples included), then of
    :data:`~noema_graph.prompts.REACT` the ``tools`` the step offers (names, descriptions,
    argument schemas: the grammar narrows the values, not this text), the reply form and
    the rules: the same text in every run that offers these tools, whatever its request.
    The request's pattern, the goal, the step and the results come after it. None for the
    other protocol (its default, the instructions before the examples, applies).
    """
    if deps.protocol != "react" or not prompt:
        return None
    head, _, rest = REACT.text.partition("${tools}")
    rules = rest.partition("${hints}")[0]
    opening = head.replace("${agent_name}", deps.config.name) + tools_text(tools) + rules
    text = prompt[0].text
    at = text.find(opening)
    return text[: at + len(opening)] if at >= 0 else None


def _react_message(
    message: AIMessage, trace: list[ReasoningStep], *, actions: bool
) -> tuple[AIMessage, str]:
    """Turn a ReAct text answer into an AIMessage with tool calls; return it and its thought.

    ``actions`` False (an answer-only turn) reads the answer only, never a call. A call that
    only repeats the last tool call or feeds it its own result becomes the step's answer:
    that result (see :mod:`noema_graph.protocols.react_guard`). A written prose answer loses
    a repeated run (:func:`~noema_graph.models.repetition.trim_repetition`).
    """
    parsed = parse_response(message.text, actions=actions)
    answer = {"id": message.id, "usage_metadata": message.usage_metadata}
    if parsed.tool is not None:
        args = parsed.tool_input or {}
        fed = feeds_own_result(parsed.tool, args, trace)
        if fed is not None:
            call = f"{parsed.tool}({json.dumps(args, default=str)})"
            thought = f"{call} {FED_BACK}"
            return AIMessage(content=observation_answer(fed), **answer), thought
        call = {"name": parsed.tool, "args": args, "id": f"react_{uuid4().hex[:12]}"}
        return AIMessage(content=parsed.thought, tool_calls=[call], **answer), parsed.thought
    if not isinstance(parsed.result, str):
        return AIMessage(content=str(parsed.result), **answer), parsed.thought
    # prose only: JSON repeats its keys by design, and a cut would leave it unparsable
    json_like = parsed.result.lstrip().startswith(("{", "["))
    result = parsed.result if json_like else trim_repetition(parsed.result)
    return AIMessage(content=result, **answer), parsed.thought


def _apply(
    state: AgentState,
    runtime: NodeRuntime,
    deps: AgentDeps,
    response: object,
    extra: list[ToolMessage],
    seconds: float,
    trace: list[ReasoningStep],
    tools: Sequence[BaseTool] = (),
) -> AgentUpdate:
    message = as_ai_message(response, used_call_ids(state.get("messages") or []))
    thought = message.text
    if deps.protocol == "react" and not (message.tool_calls and planned(message)):
        message, thought = _react_message(
            message, state.get("trace") or [], actions=answer_only_note(state, deps.config) is None
        )
        message = as_ai_message(
            message, used_call_ids(state.get("messages") or [])
        )  # same boundary
    message = spread_calls(message, tools, state.get("trace") or [], state.get("reading"))
    iteration = int(state.get("iteration") or 0) + 1
    update: AgentUpdate = {
        "messages": [*extra, message],
        "iteration": iteration,
        "usage": usage_of(message, deps),
        "elapsed_s": seconds,
    }
    if state.get("answer_only"):
        update["answer_only"] = False  # written only when it changes: a row per write
    if thought:
        emit(runtime, Thinking(node="execute_step", text=thought), state)
    plan = state.get("plan")
    if not message.tool_calls:
        result = message.text
        trace.append(
            ReasoningStep(
                kind="thought", thought=thought or result, observation=result, round=iteration
            )
        )
        if plan is not None:
            update["plan"] = plan.advance(result)
    if trace:
        update["trace"] = trace
    return update


def _failure(
    state: AgentState,
    runtime: NodeRuntime,
    exc: LLMError,
    extra: list[ToolMessage],
    seconds: float,
) -> AgentUpdate:
    emit(runtime, ErrorEvent(code="llm_error", message=str(exc)), state)
    step = ReasoningStep(kind="error", thought=f"model call failed: {exc}", status="error")
    return {"llm_error": str(exc), "messages": extra, "trace": [step], "elapsed_s": seconds}


def _prepare(
    state: AgentState, runtime: NodeRuntime, deps: AgentDeps, tools: list[BaseTool]
) -> tuple[list[BaseMessage], list[ToolMessage], list[ReasoningStep]]:
    extra = dangling_answers(state)
    prompt, record = fit_context(build_prompt(state, deps, tools, extra), deps)
    trace: list[ReasoningStep] = []
    if record is not None:
        trace.append(record.as_step(int(state.get("iteration") or 0)))
        emit(
            runtime,
            Compaction(
                before_tokens=record.before_tokens,
                after_tokens=record.after_tokens,
                truncated=record.truncated,
            ),
            state,
        )
    return prompt, extra, trace


def execute_step(state: AgentState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AgentUpdate]:
    """Call the model on the current step with the tools bound.

    Reads: plan, messages, trace, counters. Writes: messages (the answer, tool calls or the
    step's result), plan (advanced when the step is done), iteration, usage, trace. The
    routers send the run here only when the model may be called.
    """
    state, advanced = yield from _steps_done(state, deps)
    plan = state.get("plan")
    if plan is not None and plan.is_complete:  # the last tool step succeeded: answer now
        return advanced
    step = plan.current_step if plan is not None else None
    with stopwatch() as took:
        tools = [] if answer_only_note(state, deps.config) else (yield from list_tools(deps))
        tools, schemas, calls = _offer(state, deps, tools)
        prompt, extra, trace = _prepare(state, runtime, deps, tools)
        try:
            if calls and step is not None:  # every argument determined
                response: object = planned_call_message(step, calls[0], calls)
            else:
                model = _step_model(state, deps, tools, schemas)
                response = yield from call_model(
                    model, prompt, runtime, deps, prefix=step_prefix(prompt, deps, tools)
                )
        except LLMError as exc:
            response = exc
        except Cancelled:
            return {"cancelled": True, "messages": extra, "trace": trace, **advanced}
    if isinstance(response, LLMError):
        return {**_failure(state, runtime, response, extra, took[0]), **advanced}
    update = _apply(state, runtime, deps, response, extra, took[0], trace, tools)
    return {**advanced, **update}


def _steps_done(state: AgentState, deps: AgentDeps) -> Steps[tuple[AgentState, AgentUpdate]]:
    """Advance the plan over tool steps that are done; return the state seen and the update.

    A write step the request names several records for waits until each has its call.
    """
    plan = state.get("plan")
    if plan is None:
        return state, {}
    trace, reading = state.get("trace") or [], state.get("reading")
    pending = holding((yield from list_tools(deps)), trace, reading) if reading else None
    advanced = steps_done(plan, trace, pending)
    if advanced is plan:
        return state, {}
    return {**state, "plan": advanced}, {"plan": advanced}


def outcome(update: AgentUpdate) -> tuple[Outcome, str]:
    """Classify execute_step's update: an error, tool calls to run, or a step answered."""
    if update.get("cancelled"):
        return Outcome.TERMINATE, "cancelled"
    if error := update.get("llm_error"):
        return Outcome.ERROR, str(error)
    messages = update.get("messages") or []
    message = messages[-1] if messages else None
    if isinstance(message, AIMessage) and message.tool_calls:
        return Outcome.LOOP_BACK, f"tool calls: {len(message.tool_calls)}"
    return Outcome.SUCCESS, "step answered"


SPEC = NodeSpec(execute_step, outcome, calls_model=True)
