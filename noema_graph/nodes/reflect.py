"""The ``reflect`` node: a structured Reflection on progress, periodic or forced by a loop."""

from __future__ import annotations

import json
from collections.abc import Mapping

from langchain_core.messages import BaseMessage, HumanMessage

from noema_graph.effects import Steps
from noema_graph.errors import LLMError
from noema_graph.events import ReflectionEvent
from noema_graph.grounding.recovery import pending_fix
from noema_graph.nodes.common import emit, latest_request, plan_text, preview, stopwatch
from noema_graph.nodes.common import system as system_message
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.llm import Asked, ask_or_error
from noema_graph.nodes.routing import fix_due, loop_state, repeat_streak
from noema_graph.nodes.spec import NodeSpec
from noema_graph.prompts import REFLECT
from noema_graph.state.agent import AgentState, AgentUpdate
from noema_graph.state.models import LoopGuard, ReasoningStep, Reflection, Usage
from noema_graph.state.outcome import Outcome

RECENT_STEPS = 8


def _prompt(state: AgentState, deps: AgentDeps, forced: bool) -> list[BaseMessage]:
    plan = state.get("plan")
    recent = (state.get("trace") or [])[-RECENT_STEPS:]
    lines = [
        f"{s.step}. [{s.kind}] {s.thought[:300]}"
        + (f" -> {s.action.tool}({s.action.input})" if s.action else "")
        + (f" => {preview(s.observation, 300)}" if s.observation else "")
        for s in recent
    ]
    note = ""
    if forced:
        sig, streak = repeat_streak(state.get("trace") or [])
        note = (
            f"WARNING: the same tool call {sig} was made {streak} times in a row with no "
            "progress. Change approach (revise) or finish."
        )
    system = REFLECT.render(
        goal=plan.goal if plan else latest_request(state.get("messages", [])),
        plan=plan_text(plan),
        trace="\n".join(lines) or "(empty)",
        loop_note=note,
    )
    return [system_message(deps.config.instructions, system), HumanMessage("Reflect now.")]


def _update(
    state: AgentState,
    runtime: NodeRuntime,
    deps: AgentDeps,
    forced: bool,
    outcome: Asked[Reflection],
    seconds: float,
) -> AgentUpdate:
    iteration = int(state.get("iteration") or 0)
    update: AgentUpdate = {"last_reflection_at": iteration, "elapsed_s": seconds}
    if forced:
        signature, streak = repeat_streak(state.get("trace") or [])
        update["loop_guard"] = LoopGuard(signature=signature or "", streak=streak)
        # the next turn answers from what was gathered, without tools: a small model that
        # repeats a call cannot repeat it again
        update["answer_only"] = True
    if isinstance(outcome, LLMError):
        step = ReasoningStep(kind="error", thought=f"reflection failed: {outcome}", status="error")
        return {**update, "llm_error": str(outcome), "trace": [step]}
    value, usage, errors = outcome
    reflection = (
        value
        if isinstance(value, Reflection)
        else Reflection(
            progress="unknown",
            remaining="unknown",
            decision="revise" if forced else "continue",
            reason=f"no valid reflection ({'; '.join(errors)[:300]})",
        )
    )
    step = ReasoningStep(
        kind="reflection",
        thought=reflection.progress,
        observation=f"{reflection.decision}: {reflection.reason}",
        round=iteration,
    )
    emit(
        runtime,
        ReflectionEvent(
            decision=reflection.decision, reason=reflection.reason, forced_by_loop=forced
        ),
        state,
    )
    return {**update, "reflection": reflection, "usage": usage, "trace": [step]}


def reflect(state: AgentState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AgentUpdate]:
    """Assess progress and decide: continue, revise or finish.

    Reads: plan, trace, iteration. Writes: reflection, last_reflection_at, loop_guard (when
    forced by a repeated call), usage, trace.
    """
    forced = loop_state(state, deps.config) == "reflect"
    fix = pending_fix(state.get("trace") or []) if fix_due(state, deps.config) else None
    with stopwatch() as took:
        if fix is not None:  # the error names its fix: follow it, no model needed
            outcome: Asked[Reflection] = (_follow(fix), Usage(), [])
        else:
            prompt = _prompt(state, deps, forced)
            outcome = yield from ask_or_error(deps.model, Reflection, prompt, runtime, deps)
    return _update(state, runtime, deps, forced, outcome, took[0])


def _follow(fix: Mapping[str, object]) -> Reflection:
    """Return the reflection that makes a failed call's named fix the next step."""
    call = f"{fix.get('tool')}({json.dumps(fix.get('args') or {}, sort_keys=True)})"
    return Reflection(
        progress="A tool call failed; its error names the fix.",
        remaining=f"Call {call}, then retry the failed step.",
        decision="revise",
        reason=f"the error's fix: {call}",
    )


def outcome(update: AgentUpdate) -> tuple[Outcome, str]:
    """Classify reflect's update by its typed decision."""
    reflection = update.get("reflection")
    if reflection is None:
        return Outcome.SKIP, "no reflection"
    if reflection.decision == "revise":
        return Outcome.REPLAN, reflection.reason
    return Outcome.SUCCESS, reflection.decision


SPEC = NodeSpec(reflect, outcome, calls_model=True)
