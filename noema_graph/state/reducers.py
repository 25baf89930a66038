"""Named, pure reducers for graph state channels.

The list channels are stored as :class:`~langgraph.channels.delta.DeltaChannel`, so each
checkpoint holds only the new entries and the size of a thread grows linearly with its
iterations. DeltaChannel hands a reducer a *batch* of writes and requires that applying two
batches one after the other equals applying their concatenation; every batch reducer below
folds its writes one by one, which gives exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from noema_graph.state.models import ReasoningStep, Usage


def merge_messages(
    current: list[AnyMessage], writes: Sequence[Sequence[AnyMessage] | AnyMessage]
) -> list[AnyMessage]:
    """Fold each write into the history with ``add_messages`` (append, or replace by id).

    Folding one write at a time keeps the reducer batching-invariant, as DeltaChannel needs.
    """
    merged: list[AnyMessage] = list(current)
    for write in writes:
        merged = add_messages(merged, write)  # type: ignore[arg-type]
    return merged


def append_steps(
    current: list[ReasoningStep], writes: Sequence[Sequence[ReasoningStep]]
) -> list[ReasoningStep]:
    """Append trace entries and number them by their position in the trace.

    Parallel tool tasks write their steps in the same superstep without knowing each other,
    so the step number is assigned here, where the order is final.
    """
    merged = list(current)
    for write in writes:
        for entry in write:
            merged.append(entry.model_copy(update={"step": len(merged) + 1}))
    return merged


def add_usage(current: Usage | None, update: Usage | None) -> Usage:
    """Sum token usage and cost; an unknown cost (None) stays unknown for the whole run."""
    base = current if current is not None else Usage()
    return base if update is None else base + update


def add_seconds(current: float | None, update: float | None) -> float:
    """Sum elapsed seconds reported by nodes."""
    return (current or 0.0) + (update or 0.0)
