"""State schemas, value models and reducers; no model calls, no I/O."""

from noema_graph.state.agent import AgentState, AskState, ToolTask
from noema_graph.state.models import (
    LoopGuard,
    PlanDraft,
    ReasoningStep,
    Reflection,
    RunInfo,
    StopReason,
    TaskPlan,
    TaskStep,
    ToolAction,
    Usage,
)
from noema_graph.state.output import (
    AgentError,
    AgentOutput,
    AgentReasoning,
    ExecutionMetadata,
    TokenUsage,
    TraceStep,
)

__all__ = [
    "AgentError",
    "AgentOutput",
    "AgentReasoning",
    "AgentState",
    "AskState",
    "ExecutionMetadata",
    "LoopGuard",
    "PlanDraft",
    "ReasoningStep",
    "Reflection",
    "RunInfo",
    "StopReason",
    "TaskPlan",
    "TaskStep",
    "TokenUsage",
    "ToolAction",
    "ToolTask",
    "TraceStep",
    "Usage",
]
