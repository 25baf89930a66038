"""The ``generate_answer`` node: answer from the model and recalled memory, no tools."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage

from noema_graph.effects import Steps
from noema_graph.errors import LLMError, RunTimeout
from noema_graph.events import ErrorEvent
from noema_graph.models.repetition import trim_repetition
from noema_graph.nodes.common import emit, stopwatch
from noema_graph.nodes.common import system as system_message
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.finalize import announce, validate_result
from noema_graph.nodes.finalize import outcome as finalize_outcome
from noema_graph.nodes.llm import as_ai_message, call_model, usage_of
from noema_graph.nodes.output import build_output
from noema_graph.nodes.spec import NodeSpec
from noema_graph.prompts import ANSWER
from noema_graph.state.agent import AgentState, AskState, AskUpdate
from noema_graph.state.models import HookFailure, ReasoningStep, StopReason, Usage
from noema_graph.state.reducers import apply_update


def _prompt(state: AskState, deps: AgentDeps) -> list[BaseMessage]:
    memory = state.get("memory_context") or []
    memory_text = "\n".join(f"- {m['value']}" for m in memory) or "(none)"
    system = ANSWER.render(agent_name=deps.config.name, memory=memory_text)
    return [system_message(deps.config.instructions, system), *state.get("messages", [])]


def _finish(
    state: AskState,
    runtime: NodeRuntime,
    deps: AgentDeps,
    response: AIMessage | LLMError | RunTimeout | HookFailure,
    seconds: float,
) -> AskUpdate:
    reason: StopReason | None
    if isinstance(response, HookFailure):
        text, usage, reason = "", Usage(), response.code
    elif isinstance(response, RunTimeout):
        emit(runtime, ErrorEvent(code="timeout", message=str(response)), state)
        text, usage, reason = "", Usage(), "timeout"
    elif isinstance(response, LLMError):
        emit(runtime, ErrorEvent(code="llm_error", message=str(response)), state)
        state = {**state, "llm_error": str(response)}
        text, usage, reason = "", Usage(), "llm_error"
    else:
        # a small model loops until its token cap: keep the text before the loop
        text, usage, reason = trim_repetition(response.text), usage_of(response, deps), None
    result, validated = (
        validate_result(text, deps.config.output_schema) if reason is None else (text, None)
    )
    step = ReasoningStep(
        kind="final" if reason is None else "error",
        thought="Answered.",
        observation=text[:2000],
        round=1,
    )
    update: AskUpdate = {
        "messages": [AIMessage(content=text)] if text else [],
        "trace": [step],
        "usage": usage,
        "elapsed_s": seconds,
        "llm_error": state.get("llm_error"),
    }
    final: AgentState = {**apply_update(AskState, state, update), "iteration": 1}
    output = build_output(final, deps.config, result=result, validated=validated, reason=reason)
    announce(runtime, state, output.model_dump(mode="json"))
    return {**update, "output": output.model_dump(mode="json")}


def generate_answer(state: AskState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AskUpdate]:
    """Answer the question with the model alone: no tools are bound.

    Reads: messages, memory_context. Writes: output, messages, trace, usage.
    """
    if (hook := state.get("hook_error")) is not None:  # a hook ended the run
        return _finish(state, runtime, deps, hook, 0.0)
    response: AIMessage | LLMError | RunTimeout
    with stopwatch() as took:
        try:
            response = as_ai_message(
                (yield from call_model(deps.model, _prompt(state, deps), runtime, deps))
            )
        except (LLMError, RunTimeout) as exc:
            response = exc
    return _finish(state, runtime, deps, response, took[0])


SPEC = NodeSpec(generate_answer, finalize_outcome, calls_model=True)
