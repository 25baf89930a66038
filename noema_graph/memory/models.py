"""Value models of the memory layer: entries, scored hits and the ``MemoryUnavailable`` warning."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from noema_graph import clock
from noema_graph.errors import NoemaError
from noema_graph.events import WarningEvent

Tier = Literal["working", "persistent"]
Scope = Literal["all", "working", "persistent"]
TIERS: tuple[Tier, ...] = ("working", "persistent")


def now_utc() -> datetime:
    """Return the current time, timezone-aware UTC (from :mod:`noema_graph.clock`)."""
    return clock.now()


class MemoryEntry(BaseModel):
    """One remembered fact, as stored under ``("memory", tier, ...)``."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="Unique key inside the entry's namespace.")
    value: str = Field(description="The remembered text.")
    content_type: str = Field(
        default="text", description="What the text is: 'fact', 'observation', 'run_summary'..."
    )
    tier: Tier = Field(description="'working' (this thread) or 'persistent' (user and agent).")
    created_at: datetime = Field(default_factory=now_utc, description="When it was stored (UTC).")
    expires_at: datetime | None = Field(
        default=None, description="When it stops being recalled (UTC); None keeps it forever."
    )

    def expired(self, at: datetime | None = None) -> bool:
        """Return whether the entry has expired at ``at`` (default: now)."""
        return self.expires_at is not None and self.expires_at <= (at or now_utc())


class MemoryHit(BaseModel):
    """A recalled entry and its relevance score (higher is better)."""

    model_config = ConfigDict(frozen=True)

    entry: MemoryEntry
    score: float = Field(description="Cosine similarity (semantic) or BM25 score (keyword).")


class MemoryUnavailable(NoemaError):
    """The memory store failed; the run goes on without memory.

    The run helpers return this instead of raising it; the caller turns it into a ``warning``
    event with :meth:`to_event`. It is an exception so a caller may also raise it.
    """

    code = "memory_unavailable"

    def __init__(self, operation: str, error: BaseException) -> None:
        """Describe the failed ``operation`` ('recall' or 'persist') and its cause."""
        self.operation = operation
        self.error_type = type(error).__name__
        self.detail = str(error)
        super().__init__(f"memory {operation} failed ({self.error_type}: {self.detail})")

    def to_event(self, run_id: str = "") -> WarningEvent:
        """Return the ``warning`` activity event for this failure."""
        return WarningEvent(code=self.code, message=str(self), run_id=run_id)


class MemoryRecall(NamedTuple):
    """What :func:`recall_context` returns: the hits and, if memory failed, why.

    Unpack it as ``hits, unavailable = recall_context(...)``.
    """

    hits: list[MemoryHit]
    unavailable: MemoryUnavailable | None = None
