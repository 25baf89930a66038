"""Helpers shared by the node functions: events, prompt pieces and request extraction."""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AnyMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.types import Overwrite

from noema_graph import clock
from noema_graph.config import AgentConfig
from noema_graph.context import DEFAULT_CONTEXT, RunContext, context_of, run_user
from noema_graph.effects import Steps
from noema_graph.errors import RunTimeout
from noema_graph.events import ActivityEvent, TurnStart
from noema_graph.memory import MemoryRecall, recall_steps
from noema_graph.memory.models import MemoryHit
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.routing import latest_human_text, time_left
from noema_graph.state.agent import AskUpdate, MemoryItem, RouteState
from noema_graph.state.models import ReasoningStep, RunInfo, TaskPlan

logger = logging.getLogger(__name__)

OBSERVATION_PREVIEW_CHARS = 2_000
RECALL_LIMIT = 5
"""Memories a run starts with, at most."""


def system(instructions: str, text: str) -> SystemMessage:
    """Return the system message: the agent's instructions, then the node's template."""
    return SystemMessage(f"{instructions.strip()}\n\n{text}" if instructions.strip() else text)


def thread_id() -> str | None:
    """Return the thread id of the run this node belongs to, if any."""
    try:
        value = get_config().get("configurable", {}).get("thread_id")
    except RuntimeError:  # called outside a graph run (unit tests, direct calls)
        return None
    return None if value is None else str(value)


def run_position() -> tuple[int | None, str | None]:
    """Return the LangGraph step and checkpoint id of the node in progress, when known."""
    try:
        config = get_config()
    except RuntimeError:  # called outside a graph run
        return None, None
    step = (config.get("metadata") or {}).get("langgraph_step")
    checkpoint = (config.get("configurable") or {}).get("checkpoint_id")
    return (
        step if isinstance(step, int) else None,
        None if checkpoint is None else str(checkpoint),
    )


def ctx(runtime: NodeRuntime) -> RunContext:
    """Return the run context, or the default one when the caller gave none."""
    return context_of(runtime.context)


def user_of(runtime: NodeRuntime) -> str | None:
    """Return the learner the run names (see :func:`~noema_graph.context.run_user`), or None.

    Read in a node (its config names the run): the context, its ``configurable`` and the
    server's authenticated user, never the request's text.
    """
    try:
        configurable = get_config().get("configurable")
    except RuntimeError:  # called outside a run: no config
        configurable = None
    return run_user(ctx(runtime), configurable)


def memory_user(runtime: NodeRuntime) -> str:
    """Return whose memories the run recalls and writes: its learner, else the default user."""
    return user_of(runtime) or DEFAULT_CONTEXT.user_id


def emit(runtime: NodeRuntime, event: ActivityEvent, state: Mapping[str, Any]) -> None:
    """Send ``event`` to the ``custom`` stream, stamped with the run id."""
    run: RunInfo | None = state.get("run")
    payload = event.model_dump(mode="json")
    payload["run_id"] = run.run_id if run else str(state.get("run_id", ""))
    runtime.stream_writer(payload)


@contextmanager
def stopwatch() -> Generator[list[float]]:
    """Yield a one-item list that holds the elapsed seconds once the block ends."""
    cell = [0.0]
    start = clock.monotonic()
    try:
        yield cell
    finally:
        cell[0] = clock.monotonic() - start


@dataclass(frozen=True)
class Span:
    """How long something took, and when it started and ended (UTC, ISO 8601)."""

    seconds: float
    started_at: str
    ended_at: str


class Clock:
    """Time one piece of work: a monotonic duration plus wall-clock start and end.

    Both read :mod:`noema_graph.clock`, so a test can move time instead of sleeping.
    """

    def __init__(self) -> None:
        """Start timing now."""
        self._start = clock.monotonic()
        self._started_at = clock.utc_now()

    def stop(self) -> Span:
        """Return the span from start until now."""
        return Span(clock.monotonic() - self._start, self._started_at, clock.utc_now())


def start_run(
    runtime: NodeRuntime,
    deps: AgentDeps,
    state: Mapping[str, Any],
    *,
    mode: Literal["agent", "ask"],
) -> tuple[RunInfo, str]:
    """Open a run for the latest request and announce it with a TurnStart event.

    Returns:
        The run's identity (the caller's trace id wins when given) and the request text.
    """
    request = latest_request(state.get("messages", []))
    trace_id = ctx(runtime).trace_id
    run = RunInfo(
        request=request,
        model=deps.profile.model_name,
        **({"trace_id": trace_id} if trace_id else {}),
    )
    emit(runtime, TurnStart(request=request, mode=mode), {"run": run})
    return run, request


def recall(runtime: NodeRuntime, deps: AgentDeps, request: str) -> Steps[MemoryRecall]:
    """Recall memories relevant to ``request`` for this user, agent and thread (read-only)."""
    return recall_steps(
        runtime.store,
        user_id=memory_user(runtime),
        agent=deps.config.name,
        thread_id=thread_id(),
        query=request,
        limit=RECALL_LIMIT,
        embedder=deps.embedder,
    )


def memory_items(hits: Sequence[MemoryHit]) -> list[MemoryItem]:
    """Return recalled memory hits as the plain dicts kept in state."""
    return [{"key": h.entry.key, "value": h.entry.value, "score": h.score} for h in hits]


def latest_request(messages: Sequence[AnyMessage]) -> str:
    """Return the text of the last human message (see :func:`routing.latest_human_text`)."""
    return latest_human_text(messages)


def plan_text(plan: TaskPlan | None) -> str:
    """Render a plan as numbered lines with statuses."""
    if plan is None:
        return "(no plan)"
    return "\n".join(f"{i + 1}. [{s.status}] {s.description}" for i, s in enumerate(plan.steps))


def results_text(plan: TaskPlan | None) -> str:
    """Render the completed steps' results."""
    done = plan.completed_results() if plan else []
    if not done:
        return "(none yet)"
    return "\n".join(f"- {desc}: {result}" for desc, result in done)


def tools_text(tools: Sequence[BaseTool]) -> str:
    """Render tool names, descriptions and argument schemas for a prompt."""
    if not tools:
        return "(no tools)"
    lines = []
    for tool in tools:
        schema = json.dumps(tool.args, sort_keys=True, default=str)
        lines.append(f"- {tool.name}: {tool.description.strip()} Arguments: {schema}")
    return "\n".join(lines)


TRUNCATED = "... [truncated"
"""What :func:`preview` puts after the part of a value it keeps."""


def preview(value: object, limit: int = OBSERVATION_PREVIEW_CHARS) -> str:
    """Return ``value`` as text, cut to ``limit`` characters with a marker."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) <= limit:
        return text
    return text[:limit] + f"{TRUNCATED} {len(text) - limit} chars]"


def out_of_time(
    state: RouteState,
    node: str,
    exc: RunTimeout,
    config: AgentConfig,
    context: RunContext,
) -> AskUpdate:
    """Return the update of a node whose call the run's time budget stopped.

    The budget counts as spent (``elapsed_s`` is raised to what makes the active time equal
    the timeout), so the routers end the run in ``finalize`` with ``timeout``.
    """
    left = time_left(state, config, context) or 0.0
    step = ReasoningStep(
        kind="error", status="error", thought=f"{node} stopped: {exc}", observation=str(exc)
    )
    return {"elapsed_s": Overwrite(float(state.get("elapsed_s") or 0.0) + left), "trace": [step]}
