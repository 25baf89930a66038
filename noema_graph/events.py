"""Typed activity events streamed to UIs through LangGraph's ``custom`` stream mode.

Every event is a dict with ``type`` plus the fields of its model below; nodes emit them in
order: turn_start, plan_created, (thinking, tool_call_start, tool_call_end)*, reflection,
plan_revised, content_chunk, turn_end; error and warning whenever they happen.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.state.models import utc_now


class ActivityEvent(BaseModel):
    """Fields every event carries (each event class adds its ``type``)."""

    model_config = ConfigDict(frozen=True)

    run_id: str = ""
    timestamp: str = Field(default_factory=utc_now)


class _ToolCallEvent(ActivityEvent):
    """Fields of the events about one tool call."""

    call_id: str
    tool: str


class _Notice(ActivityEvent):
    """Fields of errors and warnings: a stable code and a readable message."""

    code: str
    message: str


class _PlanEvent(ActivityEvent):
    """Fields of the events that carry a plan."""

    goal: str
    steps: list[str]


class TurnStart(ActivityEvent):
    """A run began: the request and the mode."""

    type: Literal["turn_start"] = "turn_start"
    request: str
    mode: Literal["agent", "ask"]


class Thinking(ActivityEvent):
    """The model produced reasoning text in ``node``."""

    type: Literal["thinking"] = "thinking"
    node: str
    text: str


class ToolCallStart(_ToolCallEvent):
    """A tool call is about to run."""

    type: Literal["tool_call_start"] = "tool_call_start"
    input: Any = None


class ToolCallEnd(_ToolCallEvent):
    """A tool call finished (``status`` error covers refusals and exceptions)."""

    type: Literal["tool_call_end"] = "tool_call_end"
    status: Literal["ok", "error"]
    output: str
    duration_ms: float


class ContentChunk(ActivityEvent):
    """A piece of the final answer."""

    type: Literal["content_chunk"] = "content_chunk"
    text: str


class TurnEnd(ActivityEvent):
    """The run ended: success, why it stopped, tokens and cost."""

    type: Literal["turn_end"] = "turn_end"
    success: bool
    stop_reason: str | None = None
    total_tokens: int = 0
    cost_usd: float | None = 0.0


class ErrorEvent(_Notice):
    """Something failed; ``code`` matches ``output.error.code`` when it ends the run."""

    type: Literal["error"] = "error"


class WarningEvent(_Notice):
    """Something degraded without failing the run (memory unavailable, fallback plan...)."""

    type: Literal["warning"] = "warning"


class PlanCreated(_PlanEvent):
    """The planner produced a plan (``fallback`` when it had to answer directly)."""

    type: Literal["plan_created"] = "plan_created"
    fallback: bool = False


class PlanRevised(_PlanEvent):
    """The plan was revised; completed steps are kept."""

    type: Literal["plan_revised"] = "plan_revised"
    replans: int


class ReflectionEvent(ActivityEvent):
    """The model reflected on progress and decided what to do next."""

    type: Literal["reflection"] = "reflection"
    decision: str
    reason: str
    forced_by_loop: bool = False


class Compaction(ActivityEvent):
    """Older observations were shortened to fit the context window."""

    type: Literal["compaction"] = "compaction"
    before_tokens: int
    after_tokens: int
    truncated: int


class HumanInputRequested(ActivityEvent):
    """The run pauses for the user: a question (clarify) or tool calls to approve (confirm).

    ``request`` is the interrupt's value, a ClarifyRequest or ConfirmRequest as a dict.
    """

    type: Literal["human_input_requested"] = "human_input_requested"
    kind: Literal["clarify", "confirm"]
    request: dict[str, object]


class HookFailed(ActivityEvent):
    """A pre/post hook vetoed or failed: the run ends with ``code``."""

    type: Literal["hook_failed"] = "hook_failed"
    code: str
    node: str
    stage: str
    message: str


EVENT_TYPES: tuple[type[ActivityEvent], ...] = (
    TurnStart,
    Thinking,
    ToolCallStart,
    ToolCallEnd,
    ContentChunk,
    TurnEnd,
    ErrorEvent,
    WarningEvent,
    PlanCreated,
    PlanRevised,
    ReflectionEvent,
    Compaction,
    HumanInputRequested,
    HookFailed,
)
