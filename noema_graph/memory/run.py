"""Run helpers the agent graphs call: read memories before a run, write them after it.

A memory failure never fails a run. Both helpers catch the Store's own errors
(:data:`MEMORY_ERRORS`), log a warning and hand back a :class:`MemoryUnavailable` that the
caller turns into a ``warning`` event (``unavailable.to_event()``)::

    hits, unavailable = recall_context(store, user_id=u, agent=a, thread_id=t, query=q)
    if unavailable is not None:
        emit(unavailable.to_event(run_id))
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from pydantic import ValidationError

from noema_graph.effects import Steps, adrive, drive, io
from noema_graph.memory.manager import MemoryManager
from noema_graph.memory.models import MemoryEntry, MemoryRecall, MemoryUnavailable, now_utc

logger = logging.getLogger(__name__)

# What a broken, locked or corrupt store raises. aiosqlite re-raises sqlite3's errors; a
# malformed stored value fails validation. Programming errors are not caught.
MEMORY_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, OSError, ValidationError)
MAX_CHARS = 4_000
MAX_QUERY_CHARS = 2_000
"""Characters of a request used as the recall query (a long request is not embedded whole)."""


def _manager(
    store: BaseStore, user_id: str, agent: str, thread_id: str | None, embedder: Embeddings | None
) -> MemoryManager:
    return MemoryManager(
        store, user_id=user_id, agent=agent, thread_id=thread_id, embedder=embedder
    )


def _unavailable(operation: str, exc: Exception) -> MemoryUnavailable:
    warning = MemoryUnavailable(operation, exc)
    logger.warning("%s; the run goes on without memory", warning)
    return warning


def _run_entries(
    thread_id: str | None, request: str, result: str, observations: Sequence[str]
) -> list[MemoryEntry]:
    digest = hashlib.sha256(f"{thread_id}\0{request}\0{result}".encode()).hexdigest()[:16]
    now = now_utc()
    entries = [
        MemoryEntry(
            key=f"run-{digest}",
            value=f"{request}\n{result}"[:MAX_CHARS],
            content_type="run_summary",
            tier="persistent",
            created_at=now,
        )
    ]
    if thread_id is not None:
        entries += [
            MemoryEntry(
                key=f"run-{digest}-obs-{i}",
                value=text[:MAX_CHARS],
                content_type="observation",
                tier="working",
                created_at=now,
            )
            for i, text in enumerate(observations)
            if text.strip()
        ]
    return entries


def recall_steps(
    store: BaseStore | None,
    *,
    user_id: str,
    agent: str,
    thread_id: str | None = None,
    query: str,
    limit: int = 5,
    embedder: Embeddings | None = None,
) -> Steps[MemoryRecall]:
    """Recall memories for ``query`` from this thread and the user's agent memory. Read-only.

    A node step (driven sync or async); :func:`recall_context` and :func:`arecall_context`
    drive it for callers outside a graph.

    Args:
        store: The graph's Store; None (no store configured) recalls nothing.
        user_id: Whose persistent memory to search.
        agent: Which agent's persistent memory to search.
        thread_id: This conversation; None searches persistent memory only.
        query: What to look for (only its first ``MAX_QUERY_CHARS`` characters are used).
        limit: At most this many hits.
        embedder: Semantic recall with this model; None recalls by keyword.

    Returns:
        ``(hits, unavailable)``: hits best first; ``unavailable`` is set when the store failed.
    """
    if store is None or not query.strip():
        return MemoryRecall([])
    manager = _manager(store, user_id, agent, thread_id, embedder)
    text = query[:MAX_QUERY_CHARS]
    try:
        hits = yield io(
            lambda: manager.recall(text, "all", limit),
            lambda: manager.arecall(text, "all", limit),
        )
    except MEMORY_ERRORS as exc:
        return MemoryRecall([], _unavailable("recall", exc))
    return MemoryRecall(hits)


def persist_steps(
    store: BaseStore | None,
    *,
    user_id: str,
    agent: str,
    thread_id: str | None,
    request: str,
    result: str,
    observations: Sequence[str] = (),
    embedder: Embeddings | None = None,
) -> Steps[MemoryUnavailable | None]:
    """Remember a finished run; one Store batch, idempotent for the same run.

    The request and result go to the persistent tier (a ``run_summary``), each observation to
    this thread's working tier. A node step; :func:`persist_run` / :func:`apersist_run` drive it.

    Returns:
        None when stored (or there is no store), else the :class:`MemoryUnavailable` warning.
    """
    if store is None:
        return None
    manager = _manager(store, user_id, agent, thread_id, embedder)
    entries = _run_entries(thread_id, request, result, observations)
    try:
        yield io(lambda: manager.store_entries(entries), lambda: manager.astore_entries(entries))
    except MEMORY_ERRORS as exc:
        return _unavailable("persist", exc)
    return None


def recall_context(store: BaseStore | None, **kwargs: Any) -> MemoryRecall:
    """Drive :func:`recall_steps` blocking (same arguments)."""
    return drive(recall_steps(store, **kwargs))


async def arecall_context(store: BaseStore | None, **kwargs: Any) -> MemoryRecall:
    """Drive :func:`recall_steps` asynchronously (same arguments)."""
    return await adrive(recall_steps(store, **kwargs))


def persist_run(store: BaseStore | None, **kwargs: Any) -> MemoryUnavailable | None:
    """Drive :func:`persist_steps` blocking (same arguments)."""
    return drive(persist_steps(store, **kwargs))


async def apersist_run(store: BaseStore | None, **kwargs: Any) -> MemoryUnavailable | None:
    """Drive :func:`persist_steps` asynchronously (same arguments)."""
    return await adrive(persist_steps(store, **kwargs))
