"""The output contract every run ends with (seed 000, Output Interface)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.state.models import ToolAction


class AgentError(BaseModel):
    """Why a run did not succeed."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="max_iterations | timeout | budget_exceeded | cancelled | ...")
    message: str
    details: Any = None
    recoverable: bool = True


class TraceStep(BaseModel):
    """One reasoning step as published in the output."""

    model_config = ConfigDict(frozen=True)

    step: int
    kind: str = "thought"
    thought: str
    action: ToolAction | None = None
    observation: str | None = None
    timestamp: str
    started_at: str | None = None
    ended_at: str | None = None


class ToolCallRecord(BaseModel):
    """One tool call as it ran, in execution order."""

    model_config = ConfigDict(frozen=True)

    tool: str
    args: Any = None
    status: str
    started_at: str | None = None
    ended_at: str | None = None


class AgentReasoning(BaseModel):
    """The full trace, a summary of the decision and a confidence score."""

    model_config = ConfigDict(frozen=True)

    steps: list[TraceStep]
    decision: str
    confidence: float = Field(ge=0.0, le=1.0)


class TokenUsage(BaseModel):
    """Tokens summed from every model call's usage_metadata."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ExecutionMetadata(BaseModel):
    """What the run cost and how it went."""

    model_config = ConfigDict(frozen=True)

    execution_time_ms: float
    iterations: int
    tools_used: list[str]
    tool_calls: list[ToolCallRecord] = Field(
        default_factory=list[ToolCallRecord],
        description="Every tool call in execution order, with its status and times.",
    )
    token_usage: TokenUsage
    estimated_cost_usd: float | None
    model: str
    agent_version: str
    agent_name: str = "noema"
    trace_id: str = ""
    replans: int = 0
    stop_reason: str | None = None
    changes: dict[str, Any] | None = Field(
        default=None,
        description="What the run changed in the learning store: count, tables, dry_run, "
        "undone (filled by the CLI and the facade from the change journal).",
    )


class AgentOutput(BaseModel):
    """The contract of ``state["output"]``: result or error, reasoning and metadata."""

    model_config = ConfigDict(frozen=True)

    success: bool
    result: Any = None
    validated: bool | None = Field(
        default=None, description="None without output_schema; else whether result matched it."
    )
    error: AgentError | None = None
    outcome: str = Field(
        default="success",
        description="The run's Outcome: success | partial | error | terminate, or clarify | "
        "confirm while the run is paused for the user.",
    )
    interrupts: list[dict[str, Any]] = Field(
        default_factory=list[dict[str, Any]],
        description="While paused: the pending requests (ClarifyRequest / ConfirmRequest "
        "dicts, each with its interrupt 'id'); empty once the run has finished.",
    )
    reasoning: AgentReasoning
    metadata: ExecutionMetadata
