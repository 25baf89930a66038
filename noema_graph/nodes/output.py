"""Assemble the output contract from the final state: trace, metrics, confidence.

Confidence formula (documented in docs/output.md), from the trace alone::

    c = 1.0
      - 0.3 * iterations / max_iterations          # long runs are less certain
      - 0.3 * failed_tool_calls / tool_calls       # failing tools weaken the evidence
      - 0.1 * min(replans, 2)                      # each replan: the first plan was wrong
      - 0.05 * min(hallucinated_actions, 4)        # calls to tools that do not exist
      - 0.1 if the plan fell back to "answer directly"
      - 0.2 if the result did not validate against output_schema
    c = c * 0.5 if the run did not succeed (a limit or error ended it, or the result is
                empty, unvalidated, or not backed by a successful tool result)
    clamped to [0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from pydantic import JsonValue

from noema_graph.config import AgentConfig
from noema_graph.errors import FORBIDDEN_MESSAGE
from noema_graph.grounding.recovery import domain_failure
from noema_graph.nodes.routing import active_seconds
from noema_graph.state import AgentError, AgentOutput, AgentReasoning
from noema_graph.state.agent import AgentState
from noema_graph.state.models import (
    HookFailure,
    ReasoningStep,
    Refusal,
    RequestReading,
    RunInfo,
    StopReason,
    TaskPlan,
    Usage,
)
from noema_graph.state.outcome import run_outcome
from noema_graph.state.output import ExecutionMetadata, TokenUsage, ToolCallRecord, TraceStep

UNEARNED_MESSAGES: dict[str, str] = {
    "empty_result": "The run finished without a result.",
    "unvalidated": "The result does not match the agent's output schema.",
    "tools_failed": "Every tool call failed: the result is not backed by any tool result.",
    "ungrounded": "The result needs more successful tool results than the run has.",
}
"""Why a run that finished did not succeed (``error.code``, ``outcome: partial``)."""

STOP_MESSAGES: dict[str, str] = {
    "max_iterations": "The iteration limit was reached before the task was finished.",
    "timeout": "The wall-clock budget ran out before the task was finished.",
    "budget_exceeded": "The token or cost budget was exhausted before the task was finished.",
    "cancelled": "The run was cancelled.",
    "loop_detected": "The agent repeated the same tool call without progress and was stopped.",
    "llm_error": "The model failed and retrying did not help.",
    "hook_error": "A pre/post-process hook failed; the run was ended.",
    "hook_veto": "A pre/post-process hook vetoed the run.",
    "refused": "The request was refused before anything changed.",
    "forbidden": FORBIDDEN_MESSAGE,
}


def tools_used(trace: Sequence[ReasoningStep]) -> list[str]:
    """Return tool names in order of first use (calls to unknown tools excluded)."""
    seen: dict[str, None] = {}
    for step in trace:
        if step.kind == "tool" and step.action is not None:
            seen.setdefault(step.action.tool, None)
    return list(seen)


def successful_tool_results(trace: Sequence[ReasoningStep]) -> int:
    """Return how many tool calls of the trace succeeded."""
    return sum(1 for step in trace if step.kind == "tool" and step.status == "ok")


def grounded(trace: Sequence[ReasoningStep], config: AgentConfig) -> bool:
    """Return False when the answer must come from tool results the run does not have.

    An agent with ``answer_after_tool_results`` answers from that many successful results;
    with fewer, any answer it wrote would be invented.
    """
    needed = config.answer_after_tool_results
    return needed is None or successful_tool_results(trace) >= needed


def confidence(
    trace: Sequence[ReasoningStep],
    *,
    iterations: int,
    max_iterations: int,
    replans: int,
    stopped: bool,
    validated: bool | None,
) -> float:
    """Return a 0..1 confidence computed from the trace (formula in the module docstring)."""
    tool_steps = [s for s in trace if s.kind == "tool"]
    failed = sum(1 for s in tool_steps if s.status == "error")
    hallucinated = sum(1 for s in trace if s.kind == "hallucinated_action" and s.action)
    score = 1.0 - 0.3 * min(iterations / max(max_iterations, 1), 1.0)
    if tool_steps:
        score -= 0.3 * failed / len(tool_steps)
    score -= 0.1 * min(replans, 2) + 0.05 * min(hallucinated, 4)
    if any(s.kind == "plan_fallback" for s in trace):
        score -= 0.1
    if validated is False:
        score -= 0.2
    if stopped:
        score *= 0.5
    return round(min(max(score, 0.0), 1.0), 3)


def decision_summary(
    plan: TaskPlan | None, iterations: int, tools: list[str], reason: StopReason | None
) -> str:
    """Summarise the run in one human-readable sentence."""
    done = sum(1 for s in plan.steps if s.status == "completed") if plan else 0
    total = len(plan.steps) if plan else 0
    text = f"Completed {done}/{total} plan steps in {iterations} iterations"
    text += f" using {', '.join(tools)}" if tools else " without tools"
    return text + (f"; stopped early: {reason}." if reason else ".")


def partial_result(plan: TaskPlan | None) -> str:
    """Return what the completed steps produced, for runs a limit ended."""
    done = plan.completed_results() if plan else []
    if not done:
        return ""
    return "\n".join(f"{desc}: {result}" for desc, result in done)


def unearned(
    result: object, validated: bool | None, trace: Sequence[ReasoningStep], config: AgentConfig
) -> str | None:
    """Return why a finished run's result does not count as success, or None when it does.

    A result must be non-empty; with an ``output_schema`` it must also validate and be
    grounded: at least one tool call succeeded if any was made, and as many successful
    results as ``answer_after_tool_results`` asks for.
    """
    if result is None or result in ("", {}, []):
        return "empty_result"
    if config.output_schema is None:
        return None
    if validated is False:
        return "unvalidated"
    tools = [s for s in trace if s.kind in ("tool", "hallucinated_action") and s.action]
    if tools and not any(s.kind == "tool" and s.status == "ok" for s in tools):
        return "tools_failed"
    return None if grounded(trace, config) else "ungrounded"


def _refusal(state: AgentState) -> Refusal | None:
    reading: RequestReading | None = state.get("reading")
    return reading.refusal if reading is not None else None


def _details(state: AgentState, reason: StopReason) -> JsonValue:
    if reason == "llm_error":
        return {"llm_error": state.get("llm_error")}
    hook: HookFailure | None = state.get("hook_error")
    if reason in ("hook_error", "hook_veto", "forbidden") and hook is not None:
        return hook.model_dump(mode="json")
    return None


def _data(step: ReasoningStep) -> dict[str, JsonValue]:
    """Return a tool step's result data (its ``ToolResult``'s ``data``), else {}."""
    output = step.action.output if step.action is not None else None
    data = output.get("data") if isinstance(output, dict) else None
    return cast(dict[str, JsonValue], data) if isinstance(data, dict) else {}


def would_change_lines(trace: Sequence[ReasoningStep]) -> list[str]:
    """Return the would-be changes of the run's dry write calls, one line per row."""
    lines: list[str] = []
    for step in trace:
        data = _data(step) if step.kind == "tool" and step.status == "ok" else {}
        would = data.get("would_change")
        if data.get("dry_run") and isinstance(would, list):
            lines += [str(line) for line in would]
    return lines


def _confirmed(trace: Sequence[ReasoningStep], reading: RequestReading) -> bool:
    """Return whether the change an unclear request may ask for ran for real (a yes)."""
    return reading.intent == "uncertain" and any(
        s.kind == "tool"
        and s.status == "ok"
        and s.action is not None
        and s.action.tool in reading.writes
        and not _data(s).get("dry_run")
        for s in trace
    )


def tool_calls(trace: Sequence[ReasoningStep]) -> list[ToolCallRecord]:
    """Return every tool call of the trace in execution order, with status and times."""
    return [
        ToolCallRecord(
            tool=s.action.tool,
            args=s.action.input,
            status=s.status,
            started_at=s.started_at,
            ended_at=s.ended_at,
        )
        for s in trace
        if s.kind in ("tool", "hallucinated_action") and s.action is not None
    ]


def _reasoning(
    state: AgentState,
    config: AgentConfig,
    validated: bool | None,
    reason: StopReason | None,
    *,
    earned: bool,
) -> AgentReasoning:
    trace: Sequence[ReasoningStep] = state.get("trace") or []
    iterations = int(state.get("iteration") or 0)
    decision = decision_summary(state.get("plan"), iterations, tools_used(trace), reason)
    reading: RequestReading | None = state.get("reading")
    if reading is not None and reading.note and not _confirmed(trace, reading):
        would = would_change_lines(trace)  # a write left undone: say what it would be
        shown = f" It would change (nothing was written): {'; '.join(would)}." if would else ""
        decision = f"{reading.note}{shown} {decision}"
    return AgentReasoning(
        steps=[TraceStep.model_validate(s, from_attributes=True) for s in trace],
        decision=decision,
        confidence=confidence(
            trace,
            iterations=iterations,
            max_iterations=config.max_iterations,
            replans=int(state.get("replans") or 0),
            stopped=not earned,
            validated=validated,
        ),
    )


def _metadata(
    state: AgentState, config: AgentConfig, reason: StopReason | None
) -> ExecutionMetadata:
    run: RunInfo = state.get("run") or RunInfo()
    trace: Sequence[ReasoningStep] = state.get("trace") or []
    usage: Usage = state.get("usage") or Usage()
    return ExecutionMetadata(
        execution_time_ms=round(active_seconds(state) * 1000, 3),
        iterations=int(state.get("iteration") or 0),
        tools_used=tools_used(trace),
        tool_calls=tool_calls(trace),
        token_usage=TokenUsage.model_validate(usage, from_attributes=True),
        estimated_cost_usd=usage.cost_usd,
        model=run.model,
        agent_version=config.version,
        agent_name=config.name,
        trace_id=run.trace_id,
        replans=int(state.get("replans") or 0),
        stop_reason=reason,
    )


def build_output(
    state: AgentState,
    config: AgentConfig,
    *,
    result: object,
    validated: bool | None,
    reason: StopReason | None,
) -> AgentOutput:
    """Build the AgentOutput of a finished run from its final state.

    ``success`` is earned: no limit or error stopped the run and :func:`unearned` finds
    nothing wrong with the result; otherwise ``error`` says why and ``outcome`` follows.
    """
    error = None
    refusal = _refusal(state) if reason == "refused" else None
    failure = domain_failure(state.get("trace") or []) if reason == "loop_detected" else None
    if failure is not None:  # the loop guard stays internal: the learner reads the problem
        error = AgentError(code=failure[0], message=failure[1], details={"stop": reason})
    elif refusal is not None:
        details = {"candidates": list(refusal.candidates)} if refusal.candidates else None
        error = AgentError(code=refusal.code, message=refusal.message, details=details)
    elif reason == "forbidden" and (hook := state.get("hook_error")) is not None:
        # the refusal is written for the learner: it is the message, as a reader's is
        error = AgentError(
            code=reason, message=hook.message, details=_details(state, reason), recoverable=False
        )
    elif reason is not None:
        error = AgentError(
            code=reason,
            message=STOP_MESSAGES[reason],
            details=_details(state, reason),
            recoverable=reason not in ("llm_error", "hook_error", "forbidden"),
        )
    elif (code := unearned(result, validated, state.get("trace") or [], config)) is not None:
        error = AgentError(code=code, message=UNEARNED_MESSAGES[code], recoverable=True)
    code = error.code if error is not None else None
    return AgentOutput(
        success=error is None,
        result=result,
        validated=validated,
        error=error,
        outcome=run_outcome(success=error is None, validated=validated, code=code).value,
        reasoning=_reasoning(state, config, validated, reason, earned=error is None),
        metadata=_metadata(state, config, reason),
    )
