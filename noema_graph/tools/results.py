"""The normalised result of every tool call and how it is shown to the model.

Every handler output, error and refusal becomes one :class:`ToolResult` before it is turned
into an observation, so the model always reads the same shape (seed 001, "Tool Results").
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.errors import NoemaError
from noema_graph.state.models import Usage

DEFAULT_MAX_OBSERVATION_CHARS = 8_000
"""Default cap on the observation text the model reads; the artifact keeps everything."""


class ToolFix(BaseModel):
    """A call that fixes a failed call's problem, as data (the message says it in words)."""

    model_config = ConfigDict(frozen=True)

    tool: str = Field(description="The tool to call.")
    args: dict[str, object] = Field(default_factory=dict, description="Its arguments.")


class ToolErrorInfo(BaseModel):
    """Why a tool call failed, and whether the model can do something about it."""

    model_config = ConfigDict(frozen=True)

    type: str = Field(description="Machine-readable kind, e.g. 'invalid_input', 'timeout'.")
    message: str = Field(description="What went wrong, naming the offending value.")
    details: dict[str, object] = Field(default_factory=dict, description="Structured context.")
    recoverable: bool = Field(
        default=True, description="True when a corrected or repeated call may succeed."
    )
    fix: ToolFix | None = Field(
        default=None, description="The call that fixes the problem, when it is a tool call."
    )


class ToolResult(BaseModel):
    """One normalised tool outcome: ``success`` with data, or ``error`` with an explanation."""

    model_config = ConfigDict(frozen=True)

    status: Literal["success", "error"] = Field(description="Outcome of the call.")
    data: dict[str, object] | None = Field(default=None, description="Payload on success.")
    error: ToolErrorInfo | None = Field(default=None, description="Set when status is error.")
    message: str | None = Field(default=None, description="Short human-readable summary.")

    @classmethod
    def ok(cls, data: dict[str, object] | None = None, message: str | None = None) -> ToolResult:
        """Build a success result."""
        return cls(status="success", data=data, message=message)

    @classmethod
    def fail(
        cls,
        type_: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        recoverable: bool = True,
        fix: ToolFix | None = None,
    ) -> ToolResult:
        """Build an error result; ``message`` is repeated at the top level for the model."""
        info = ToolErrorInfo(
            type=type_, message=message, details=details or {}, recoverable=recoverable, fix=fix
        )
        return cls(status="error", error=info, message=message)


class ToolFailure(NoemaError):
    """A failure a handler reports on purpose; it becomes an error observation, never escapes.

    Raise it from a handler for expected problems (file not found, bad pattern) so the model
    reads ``message`` and can correct itself.
    """

    def __init__(
        self,
        message: str,
        *,
        type_: str = "tool_failure",
        details: dict[str, Any] | None = None,
        recoverable: bool = True,
        fix: ToolFix | None = None,
    ) -> None:
        """Describe the failure.

        ``type_`` is the machine-readable kind, ``fix`` the call that fixes it (shown to the
        model, and followed by the agent graph).
        """
        super().__init__(message)
        self.message = message
        self.type = type_
        self.details = details or {}
        self.recoverable = recoverable
        self.fix = fix

    def to_result(self) -> ToolResult:
        """Return the error :class:`ToolResult` this failure stands for."""
        return ToolResult.fail(
            self.type,
            self.message,
            details=self.details,
            recoverable=self.recoverable,
            fix=self.fix,
        )


class TransientToolFailure(ToolFailure):
    """A failure that may go away by itself (a busy service); safe tools are retried on it."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        """Describe the transient failure."""
        super().__init__(message, type_="transient", details=details, recoverable=True)


def normalize_output(value: object) -> ToolResult:
    """Turn whatever a handler returned into a success :class:`ToolResult`.

    A ``ToolResult`` passes through; a dict becomes ``data``; a pydantic model is dumped;
    ``None`` gives empty data; anything else is wrapped as ``{"output": value}``.
    """
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, BaseModel):
        return ToolResult.ok(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return ToolResult.ok({str(key): item for key, item in value.items()})
    if value is None:
        return ToolResult.ok({})
    return ToolResult.ok({"output": value})


def render_observation(result: ToolResult, max_chars: int = DEFAULT_MAX_OBSERVATION_CHARS) -> str:
    """Serialise ``result`` to the JSON text the model reads, at most ``max_chars`` long.

    When the full JSON is too long, ``data`` is replaced by a ``data_preview`` string (the
    start of its JSON) plus ``truncated``/``full_chars`` markers, so the text stays valid JSON
    and the model knows something was cut. The untruncated result travels in the artifact.
    """
    full = result.model_dump_json(exclude_none=True)
    if len(full) <= max_chars:
        return full
    head: dict[str, Any] = result.model_dump(mode="json", exclude_none=True, exclude={"data"})
    if head.get("message") and len(head["message"]) > max_chars // 4:
        head["message"] = head["message"][: max_chars // 4] + "..."
    data_json = json.dumps(result.data, ensure_ascii=False, default=str)
    head.update(truncated=True, full_chars=len(full))
    budget = max_chars - len(json.dumps(head, ensure_ascii=False)) - len(', "data_preview": ""')
    preview = data_json[: max(budget, 0)]
    # Escaping may lengthen the preview; trim until the whole text fits.
    while preview:
        text = json.dumps({**head, "data_preview": preview}, ensure_ascii=False)
        if len(text) <= max_chars:
            return text
        preview = preview[: len(preview) - max(1, (len(text) - max_chars))]
    return json.dumps(head, ensure_ascii=False)[:max_chars]


SUBAGENT_OUTPUT = "agent_output"
"""Artifact key under which a subagent tool reports the child's AgentOutput dict."""


def child_usage(artifact: object) -> Usage | None:
    """Return the tokens and cost of a subagent run reported in a tool's artifact.

    A tool that runs another agent returns ``{SUBAGENT_OUTPUT: <AgentOutput dict>}`` as its
    artifact; its usage is rolled up into the parent run's usage.
    """
    if not isinstance(artifact, dict) or SUBAGENT_OUTPUT not in artifact:
        return None
    meta = artifact[SUBAGENT_OUTPUT]["metadata"]
    tokens = meta["token_usage"]
    return Usage(
        prompt_tokens=tokens["prompt_tokens"],
        completion_tokens=tokens["completion_tokens"],
        total_tokens=tokens["total_tokens"],
        cost_usd=meta["estimated_cost_usd"],
    )
