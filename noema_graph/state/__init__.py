"""State schemas, value models and reducers; no model calls, no I/O.

The names below are served lazily (see :mod:`noema_graph._lazy`): importing
``noema_graph.state.models`` does not load the graph schemas, LangGraph or LangChain.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.state.agent": ("AgentState", "AskState", "ToolTask"),
        "noema_graph.state.models": (
            "LoopGuard",
            "PlanDraft",
            "ReasoningStep",
            "Reflection",
            "RunInfo",
            "StopReason",
            "TaskPlan",
            "TaskStep",
            "ToolAction",
            "Usage",
        ),
        "noema_graph.state.output": (
            "AgentError",
            "AgentOutput",
            "AgentReasoning",
            "ExecutionMetadata",
            "TokenUsage",
            "TraceStep",
        ),
    },
)
