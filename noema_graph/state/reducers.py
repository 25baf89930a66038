"""Named, pure reducers for graph state channels.

The list channels are stored as :class:`~langgraph.channels.delta.DeltaChannel`, so each
checkpoint holds only the new entries and the size of a thread grows linearly with its
iterations. DeltaChannel hands a reducer a *batch* of writes and requires that applying two
batches one after the other equals applying their concatenation; every batch reducer below
folds its writes one by one, which gives exactly that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, convert_to_messages
from langgraph.graph.message import add_messages

from noema_graph.state.models import ReasoningStep, Usage


def _with_stable_ids(position: int, write: Any) -> list[BaseMessage]:
    """Convert a write to messages and give id-less ones an id derived from their content.

    ``add_messages`` would assign a random id, and a delta channel re-applies writes every
    time a checkpoint is loaded: random ids would change from one load to the next.
    """
    items = write if isinstance(write, list | tuple) and not _is_tuple_message(write) else [write]
    messages = convert_to_messages(items)
    stable: list[BaseMessage] = []
    for offset, message in enumerate(messages):
        if message.id is None:
            digest = hashlib.sha256(
                f"{position + offset}:{message.type}:{message.content!r}".encode()
            ).hexdigest()[:16]
            stable.append(message.model_copy(update={"id": f"m-{digest}"}))
        else:
            stable.append(message)
    return stable


def _is_tuple_message(write: Any) -> bool:
    return isinstance(write, tuple) and len(write) == 2 and isinstance(write[0], str)


def merge_messages(current: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """Fold each write into the history with ``add_messages`` (append, or replace by id).

    Folding one write at a time keeps the reducer batching-invariant, as DeltaChannel needs;
    id-less messages get content-derived ids so that replaying the writes is deterministic.
    """
    merged: list[AnyMessage] = list(current)
    for write in writes:
        merged = add_messages(merged, _with_stable_ids(len(merged), write))  # type: ignore[arg-type]
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


def latest(current: Any, update: Any) -> Any:
    """Keep the newest write.

    Unlike a plain channel, several writes in one superstep are allowed (the concurrent
    ``tool_node`` tasks each report an outcome): the last one applied wins.
    """
    return update if update is not None else current
