"""The ``plan`` node: turn the request into a TaskPlan, or fall back to answering directly."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool
from langgraph.types import Overwrite

from noema_graph.config import PlannedStep
from noema_graph.effects import Steps, io
from noema_graph.errors import LLMError, RunTimeout
from noema_graph.events import PlanCreated, WarningEvent
from noema_graph.grounding.reading import input_problem, may_preview, may_write, writes
from noema_graph.memory import MemoryRecall
from noema_graph.models.profile import model_profile
from noema_graph.nodes.common import (
    ctx,
    emit,
    latest_request,
    memory_items,
    recall,
    start_run,
    stopwatch,
    tools_text,
)
from noema_graph.nodes.common import system as system_message
from noema_graph.nodes.deps import AgentDeps, NodeRuntime, list_tools
from noema_graph.nodes.llm import ask_or_error
from noema_graph.nodes.plan_steps import referenced_reads
from noema_graph.nodes.routing import run_timeout
from noema_graph.nodes.spec import NodeSpec
from noema_graph.prompts import PLAN
from noema_graph.state.agent import AgentState, AgentUpdate, MemoryItem
from noema_graph.state.models import (
    PlanDraft,
    ReasoningStep,
    RequestReading,
    TaskPlan,
    TaskStep,
    ToolTime,
    Usage,
)
from noema_graph.state.reducers import append_steps

MAX_PLAN_STEPS = 8
FALLBACK_STEP = "Answer the request directly."


def _prompt(
    state: AgentState, deps: AgentDeps, tool_names: str, memory: list[MemoryItem]
) -> list[BaseMessage]:
    memory_text = ""
    if memory:
        memory_text = "\nRelevant memories:\n" + "\n".join(f"- {m['value']}" for m in memory)
    if deps.config.default_plan:
        steps = "\n".join(f"{i}. {s.text()}" for i, s in enumerate(deps.config.default_plan, 1))
        memory_text += f"\nThe agent's default plan (refine it to this request):\n{steps}"
    system = PLAN.render(
        agent_name=deps.config.name, max_steps=MAX_PLAN_STEPS, memory=memory_text, tools=tool_names
    )
    return [system_message(deps.config.instructions, system), *state.get("messages", [])]


RUN_RESET: AgentUpdate = {
    "iteration": 0,
    "replans": 0,
    "last_reflection_at": 0,
    "reflection": None,
    "loop_guard": None,
    "answer_only": False,
    "cancelled": False,
    "llm_error": None,
    "output": {},
}
"""The per-run counters and flags a new run on the thread starts from."""


Planned = tuple[PlanDraft | TaskPlan | None, Usage, list[str]] | LLMError | RunTimeout
"""What planning ended with: the structured answer, a failed model, or the time budget gone."""


def one_step_draft(request: str) -> tuple[PlanDraft, Usage, list[str]]:
    """Return the plan of the embedded model without asking it: one step, the request.

    Measured on the 135M model (``bench/bench_quality.py``): its plans are noise
    (``{"goal": "{{add(2, 3)}}", "steps": ["{{add(2, 3)}}", "ssts: {{add(2, 3)}}"]}``, or
    eight numbered variants of one step) and every extra step is one more turn to go wrong:
    the quick start ended in ``max_iterations`` and a one-call agent ran out of iterations.
    """
    # model_construct: a request may be longer than a drafted goal or step may be
    return PlanDraft.model_construct(goal=request, steps=[request]), Usage(), []


def default_plan(request: str, steps: Sequence[PlannedStep]) -> tuple[TaskPlan, Usage, list[str]]:
    """Return an agent's default plan for ``request``: its steps, each naming its tool."""
    plan = TaskPlan(
        goal=request,
        steps=tuple(
            TaskStep(
                description=s.text(),
                tool=s.tool,
                args=s.args,
                sources=s.sources,
                offer=s.offer,
            )
            for s in steps
        ),
    )
    return plan.started(), Usage(), []


def _draft(
    state: AgentState, runtime: NodeRuntime, deps: AgentDeps, prompt: list[BaseMessage]
) -> Steps[Planned]:
    """Ask the planning model for a draft, unless its profile says it does not plan.

    A model that does not plan (the embedded one) follows the agent's default plan, or
    :func:`one_step_draft` without one.
    """
    if not model_profile(deps.planning_model).plans:
        request = latest_request(state.get("messages", []))
        if deps.config.default_plan:
            return default_plan(request, deps.config.default_plan)
        return one_step_draft(request)
    return (yield from ask_or_error(deps.planning_model, PlanDraft, prompt, runtime, deps))


def _planned(request: str, outcome: Planned) -> tuple[TaskPlan, ReasoningStep, Usage]:
    """Return the plan, its trace step and the usage: the draft, or the one-step fallback."""
    fallback = TaskPlan(goal=request, steps=(TaskStep(description=FALLBACK_STEP),)).started()
    if isinstance(outcome, LLMError | RunTimeout):
        step = ReasoningStep(kind="error", thought=f"planning failed: {outcome}", status="error")
        return fallback, step, Usage()
    draft, usage, errors = outcome
    if isinstance(draft, TaskPlan):
        observation = "\n".join(s.description for s in draft.steps)
        step = ReasoningStep(
            kind="plan", thought="The agent's default plan.", observation=observation
        )
        return draft, step, usage
    if isinstance(draft, PlanDraft):
        plan = draft.to_plan(MAX_PLAN_STEPS)
        observation = "\n".join(s.description for s in plan.steps)
        return (
            plan,
            ReasoningStep(kind="plan", thought=f"Plan for: {plan.goal}", observation=observation),
            usage,
        )
    step = ReasoningStep(
        kind="plan_fallback",
        status="error",
        thought="No valid plan after retries; answering directly.",
        observation="; ".join(errors)[:2000],
    )
    return fallback, step, usage


def read_request(deps: AgentDeps, request: str) -> RequestReading | None:
    """Return what the request asks (the agent's ``request_reader``), or None without one.

    A request no reader should read (empty, too long, control characters) is refused here.
    """
    reader = deps.config.request_reader
    if reader is None:
        return None
    problem = input_problem(request)
    return RequestReading(refusal=problem) if problem is not None else reader(request)


def read_only_plan(
    plan: TaskPlan,
    reading: RequestReading,
    write_tools: set[str],
    tools: Sequence[BaseTool] = (),
) -> TaskPlan:
    """Return ``plan`` without the steps whose tools the reading does not let write.

    The records the request names are read first (:func:`referenced_reads` over ``tools``),
    so the answer to a question about them comes from them. A plan left with no step
    answers directly; the reading's note (what the run would have changed) ends the goal,
    so the answer can say it.
    """

    def kept(step: TaskStep) -> bool:
        names = [t.strip() for t in (step.tool or "").split("|") if t.strip()]
        return not names or any(
            n not in write_tools or may_write(reading, n) or may_preview(reading, n) for n in names
        )

    steps = tuple(s for s in plan.steps if kept(s))
    if len(steps) == len(plan.steps):
        return plan
    goal = f"{plan.goal}\n{reading.note}" if reading.note else plan.goal
    if reading.refusal is None:
        tool_steps = tuple(s for s in steps if s.tool)
        steps = (*referenced_reads(tools, reading, tool_steps), *steps)
    steps = steps or (TaskStep(description=FALLBACK_STEP),)
    fresh = tuple(s.model_copy(update={"status": "pending"}) for s in steps)
    return TaskPlan(goal=goal, steps=fresh).started()


def _update(
    state: AgentState,
    runtime: NodeRuntime,
    deps: AgentDeps,
    outcome: Planned,
    seconds: float,
    memory: list[MemoryItem],
    tools: Sequence[BaseTool],
    reading: RequestReading | None,
) -> AgentUpdate:
    run, request = start_run(runtime, deps, state, mode="agent")
    emitted = {"run": run}
    plan, step, usage = _planned(request, outcome)
    written = {t.name for t in tools if writes(t)}
    plan = read_only_plan(plan, reading, written, tools) if reading is not None else plan
    if step.kind == "plan_fallback":
        emit(runtime, WarningEvent(code="plan_fallback", message=step.observation or ""), emitted)
    if step.kind != "error":
        steps = [s.description for s in plan.steps]
        fallback = step.kind == "plan_fallback"
        emit(runtime, PlanCreated(goal=plan.goal, steps=steps, fallback=fallback), emitted)
    return {
        **RUN_RESET,
        "run": run,
        "memory_context": memory,
        "plan": plan,
        "reading": reading,
        "llm_error": str(outcome) if isinstance(outcome, LLMError) else None,
        "elapsed_s": Overwrite(seconds),
        "tool_time": Overwrite(ToolTime()),
        "usage": Overwrite(usage),
        "trace": Overwrite(append_steps([], [[step]])),
    }


def _memory(state: AgentState, runtime: NodeRuntime, recalled: MemoryRecall) -> list[MemoryItem]:
    hits, unavailable = recalled
    if unavailable is not None:
        emit(runtime, unavailable.to_event(), state)
    return memory_items(hits)


def plan(state: AgentState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AgentUpdate]:
    """Recall memory, then turn the request into a TaskPlan through structured output.

    The embedded model is not asked: its plan is one step, the request (see
    :func:`one_step_draft`).

    Reads: messages, the Store. Writes: run, plan, memory_context, trace (reset), usage
    (reset), the run's counters (reset), llm_error.
    """
    with stopwatch() as took:
        recalled = yield from recall(runtime, deps, latest_request(state.get("messages", [])))
        memory = _memory(state, runtime, recalled)
        tools = yield from list_tools(deps)
        prompt = _prompt(state, deps, tools_text(tools), memory)
        try:
            outcome = yield from _draft(state, runtime, deps, prompt)
        except RunTimeout as exc:
            outcome = exc
    seconds = took[0]
    if isinstance(outcome, RunTimeout):  # the whole budget went on planning
        seconds = max(seconds, run_timeout(deps.config, ctx(runtime)) or 0.0)
    request = latest_request(state.get("messages", []))
    reading = yield io(  # the reader may query the store: off the event loop in async runs
        lambda: read_request(deps, request),
        lambda: asyncio.to_thread(read_request, deps, request),
    )
    return _update(state, runtime, deps, outcome, seconds, memory, tools, reading)


SPEC = NodeSpec(plan, calls_model=True)
