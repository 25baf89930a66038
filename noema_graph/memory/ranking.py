"""Pure ranking of memory records: keyword (BM25) or semantic (cosine), best first."""

from __future__ import annotations

from collections.abc import Sequence

from noema_graph.memory.embedders import cosine
from noema_graph.memory.keyword import bm25_scores
from noema_graph.memory.models import MemoryHit
from noema_graph.memory.records import Record


def best(hits: Sequence[MemoryHit], limit: int) -> list[MemoryHit]:
    """Return the ``limit`` best hits: highest score first, newest first on ties."""
    ordered = sorted(hits, key=lambda h: (h.score, h.entry.created_at), reverse=True)
    return ordered[: max(limit, 0)]


def rank_keyword(query: str, records: Sequence[Record], limit: int) -> list[MemoryHit]:
    """Rank ``records`` by BM25 against ``query``; entries sharing no term are left out."""
    scores = bm25_scores(query, [r.entry.value for r in records])
    hits = [MemoryHit(entry=r.entry, score=s) for r, s in zip(records, scores, strict=True) if s]
    return best(hits, limit)


def rank_semantic(
    query_vector: Sequence[float],
    records: Sequence[Record],
    vectors: Sequence[Sequence[float]],
    limit: int,
) -> list[MemoryHit]:
    """Rank ``records`` (whose embeddings are ``vectors``) by cosine similarity to the query."""
    hits = [
        MemoryHit(entry=r.entry, score=cosine(query_vector, v))
        for r, v in zip(records, vectors, strict=True)
    ]
    return best(hits, limit)


def rank_scored(records: Sequence[Record], limit: int) -> list[MemoryHit]:
    """Rank records already scored by the Store's own vector index."""
    return best([MemoryHit(entry=r.entry, score=r.score or 0.0) for r in records], limit)
