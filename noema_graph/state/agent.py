"""Graph state schemas: the agent graph's, the ask graph's and the tool task payload."""

from __future__ import annotations

from typing import Annotated, Any, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.managed import RemainingSteps
from typing_extensions import TypedDict

from noema_graph.state.human import Decision
from noema_graph.state.models import (
    HookFailure,
    LoopGuard,
    ReasoningStep,
    Reflection,
    RunInfo,
    StopReason,
    TaskPlan,
    Usage,
)
from noema_graph.state.outcome import NodeOutcome
from noema_graph.state.reducers import (
    add_seconds,
    add_usage,
    append_steps,
    latest,
    merge_messages,
)


class AgentState(TypedDict, total=False):
    """State of the agent graph.

    ``messages`` and ``trace`` are delta channels (linear checkpoint growth). Counters are
    reset by ``plan`` at the start of every run on the thread.
    """

    messages: Annotated[list[AnyMessage], DeltaChannel(merge_messages)]
    trace: Annotated[list[ReasoningStep], DeltaChannel(append_steps)]
    usage: Annotated[Usage, add_usage]
    elapsed_s: Annotated[float, add_seconds]
    run: RunInfo
    plan: TaskPlan | None
    iteration: int
    replans: int
    last_reflection_at: int
    reflection: Reflection | None
    loop_guard: LoopGuard | None
    answer_only: bool
    cancelled: bool
    llm_error: str | None
    memory_context: list[dict[str, Any]]
    tool_decisions: dict[str, Decision]
    hook_error: HookFailure | None
    outcome: Annotated[NodeOutcome | None, latest]
    output: dict[str, Any]
    remaining_steps: RemainingSteps


class AskState(TypedDict, total=False):
    """State of the read-only ask graph."""

    messages: Annotated[list[AnyMessage], DeltaChannel(merge_messages)]
    trace: Annotated[list[ReasoningStep], DeltaChannel(append_steps)]
    usage: Annotated[Usage, add_usage]
    elapsed_s: Annotated[float, add_seconds]
    run: RunInfo
    memory_context: list[dict[str, Any]]
    llm_error: str | None
    hook_error: HookFailure | None
    outcome: Annotated[NodeOutcome | None, latest]
    output: dict[str, Any]


class ToolTask(TypedDict):
    """Payload of one ``Send("tool_node", ...)``: a single tool call of the last AI message."""

    tool_call: dict[str, Any]
    thought: str
    index: int
    round: int
    run_id: str
    trace_id: str
    decision: NotRequired[Decision]


__all__ = ["AgentState", "AskState", "StopReason", "ToolTask"]
