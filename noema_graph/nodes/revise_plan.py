"""The ``revise_plan`` node: replace the remaining steps, keeping the completed ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from noema_graph.effects import Steps
from noema_graph.errors import LLMError
from noema_graph.events import PlanRevised
from noema_graph.grounding.recovery import pending_fix
from noema_graph.nodes.common import emit, stopwatch
from noema_graph.nodes.common import system as system_message
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.llm import Asked, ask_or_error
from noema_graph.nodes.plan import MAX_PLAN_STEPS
from noema_graph.nodes.spec import NodeSpec
from noema_graph.prompts import REVISE
from noema_graph.state.agent import AgentState, AgentUpdate
from noema_graph.state.models import PlanDraft, ReasoningStep, TaskPlan, TaskStep
from noema_graph.state.outcome import Outcome


def _prompt(state: AgentState, instructions: str) -> list[BaseMessage]:
    plan = state.get("plan") or TaskPlan(goal="")
    done = [s for s in plan.steps if s.status == "completed"]
    todo = [s for s in plan.steps if s.status != "completed"]
    reflection = state.get("reflection")
    system = REVISE.render(
        goal=plan.goal,
        completed="\n".join(f"- {s.description}: {s.result}" for s in done) or "(none)",
        remaining="\n".join(f"- {s.description}" for s in todo) or "(none)",
        feedback=f"{reflection.remaining} ({reflection.reason})" if reflection else "(none)",
        max_steps=MAX_PLAN_STEPS,
    )
    return [
        system_message(instructions, system),
        HumanMessage("Write the revised remaining steps."),
    ]


def revised(plan: TaskPlan, draft: PlanDraft) -> TaskPlan:
    """Return ``plan`` with its completed steps kept and the rest replaced by ``draft``."""
    done = tuple(s for s in plan.steps if s.status == "completed")
    new = tuple(TaskStep(description=d) for d in draft.steps if d.strip())
    if not new:
        return plan
    return TaskPlan(goal=plan.goal, steps=done + new, current_step_index=len(done)).started()


def _update(
    state: AgentState,
    runtime: NodeRuntime,
    outcome: Asked[PlanDraft],
    seconds: float,
) -> AgentUpdate:
    replans = int(state.get("replans") or 0) + 1
    plan = state.get("plan") or TaskPlan(goal="")
    update: AgentUpdate = {"replans": replans, "elapsed_s": seconds}
    if isinstance(outcome, LLMError):
        step = ReasoningStep(
            kind="error", thought=f"plan revision failed: {outcome}", status="error"
        )
        return {**update, "llm_error": str(outcome), "trace": [step]}
    draft, usage, errors = outcome
    if not isinstance(draft, PlanDraft):
        step = ReasoningStep(
            kind="error",
            status="error",
            thought=f"No valid revised plan; keeping the current one ({'; '.join(errors)[:300]}).",
        )
        return {**update, "usage": usage, "trace": [step]}
    new_plan = revised(plan, draft)
    step = _announced(state, runtime, new_plan, replans, f"Plan revised (#{replans}).")
    return {**update, "plan": new_plan, "usage": usage, "trace": [step]}


def _announced(
    state: AgentState, runtime: NodeRuntime, plan: TaskPlan, replans: int, thought: str
) -> ReasoningStep:
    """Emit the revised plan as a ``plan_revised`` event; return its trace step."""
    steps = [s.description for s in plan.steps]
    emit(runtime, PlanRevised(goal=plan.goal, steps=steps, replans=replans), state)
    return ReasoningStep(
        kind="plan_revised",
        thought=thought,
        observation="\n".join(steps),
        round=int(state.get("iteration") or 0),
    )


def revise_plan(state: AgentState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AgentUpdate]:
    """Ask for a revised TaskPlan that keeps the completed steps.

    Reads: plan, reflection. Writes: plan, replans, usage, trace.
    """
    trace = state.get("trace") or []
    fix = pending_fix(trace)
    plan = state.get("plan")
    if fix is not None and plan is not None:
        return _with_fix(state, runtime, plan, fix)
    with stopwatch() as took:
        prompt = _prompt(state, deps.config.instructions)
        outcome = yield from ask_or_error(deps.planning_model, PlanDraft, prompt, runtime, deps)
    return _update(state, runtime, outcome, took[0])


def with_fix_step(plan: TaskPlan, fix: Mapping[str, Any]) -> TaskPlan:
    """Return ``plan`` with the fix's call inserted before the step under way."""
    tool, args = str(fix.get("tool")), dict(fix.get("args") or {})
    step = TaskStep(
        description=f"Call {tool} (the fix the last error named).",
        tool=tool,
        args=args,
        offer=tuple(args),
    )
    index = plan.current_step_index
    steps = (*plan.steps[:index], step, *plan.steps[index:])
    current = [
        s if i != index + 1 else s.model_copy(update={"status": "pending"})
        for i, s in enumerate(steps)
    ]
    return TaskPlan(goal=plan.goal, steps=tuple(current), current_step_index=index).started()


def _with_fix(
    state: AgentState, runtime: NodeRuntime, plan: TaskPlan, fix: Mapping[str, Any]
) -> AgentUpdate:
    """Make the fix a failed call's error names the next step (no model call)."""
    replans = int(state.get("replans") or 0) + 1
    new_plan = with_fix_step(plan, fix)
    thought = f"Plan revised (#{replans}): the last error names its fix."
    step = _announced(state, runtime, new_plan, replans, thought)
    return {"replans": replans, "plan": new_plan, "trace": [step]}


def outcome(update: object) -> tuple[Outcome, str]:
    """Classify revise_plan's update: the plan was revised (a replan)."""
    del update
    return Outcome.REPLAN, "plan revised"


SPEC = NodeSpec(revise_plan, outcome, calls_model=True)
