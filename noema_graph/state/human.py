"""What the graph asks a person, and what the person answers (human in the loop).

A paused run carries one of these requests as its ``interrupt()`` value; the caller resumes
with ``Command(resume=...)`` on the same thread. Requests and decisions are plain pydantic
models so the same classes validate a caller's answer and live in checkpoints.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ClarifyRequest(_Frozen):
    """The model needs information only the user has: answer with a string."""

    type: Literal["clarify"] = "clarify"
    call_id: str = Field(description="The ask_user call this question came from.")
    question: str = Field(description="The question, as the model asked it.")


class PendingCall(_Frozen):
    """A tool call that waits for approval, exactly as it would run."""

    id: str = Field(description="Tool call id; key your decision by it.")
    name: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments it would run with.")
    reason: str = Field(description="Why approval is needed (tool name, permission, effect).")


class ConfirmRequest(_Frozen):
    """Tool calls of one step wait for approval: answer with one decision per call."""

    type: Literal["confirm"] = "confirm"
    calls: tuple[PendingCall, ...] = Field(description="Every call that needs a decision.")
    error: str | None = Field(
        default=None, description="Why the previous answer was refused, when it was."
    )


class Decision(_Frozen):
    """A person's decision on one pending tool call."""

    action: Literal["approve", "reject", "edit"] = Field(
        description="approve: run as is; reject: do not run; edit: run with new args."
    )
    args: dict[str, Any] | None = Field(
        default=None, description="For edit: the arguments to run with instead."
    )
    reason: str = Field(default="", description="For reject: why (the model reads it).")


HUMAN_MODELS: tuple[type[BaseModel], ...] = (ClarifyRequest, PendingCall, ConfirmRequest, Decision)
