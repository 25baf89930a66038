"""The ``search`` toolkit: full-text search over ingested documents (and memory).

Search goes through the :class:`SearchProvider` protocol so a web or vector search can be
plugged in. The default, :class:`SqliteSearchProvider`, keeps documents in an SQLite FTS5
table (a file or ``:memory:``) and ranks hits with BM25.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.tools.results import ToolFailure
from noema_graph.tools.spec import ToolSpec

_WORD = re.compile(r"\w+", re.UNICODE)


class Document(BaseModel):
    """A text to make searchable."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(description="Full text.")
    id: str = Field(default_factory=lambda: uuid.uuid4().hex, description="Stable identifier.")
    source: str | None = Field(default=None, description="Where it came from (path, URL).")
    metadata: dict[str, object] = Field(default_factory=dict, description="Free-form JSON data.")


class SearchHit(BaseModel):
    """One search result."""

    model_config = ConfigDict(frozen=True)

    id: str
    snippet: str = Field(description="Matching excerpt, matches in [brackets].")
    score: float = Field(description="Higher is better.")
    source: str | None = None
    metadata: dict[str, object] = Field(default_factory=dict)


@runtime_checkable
class SearchProvider(Protocol):
    """Anything that answers a text query with ranked hits."""

    def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Return at most ``limit`` hits for ``query``, best first."""
        ...


class SqliteSearchProvider:
    """SQLite FTS5 full-text index; safe to use from several threads."""

    def __init__(self, path: Path | str = ":memory:") -> None:
        """Use the index at ``path`` (``":memory:"`` keeps it in RAM); opened at first use."""
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        """Open the database and create the FTS5 table on first use (lock held by caller)."""
        if self._db is None:
            if str(self.path) != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False)
            self._db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS documents USING fts5("
                "id UNINDEXED, text, source UNINDEXED, metadata UNINDEXED, tokenize='unicode61')"
            )
            self._db.commit()
        return self._db

    def add_documents(self, documents: Iterable[Document | str]) -> list[str]:
        """Index ``documents`` (a document with an existing id replaces it); return the ids."""
        docs = [Document(text=d) if isinstance(d, str) else d for d in documents]
        with self._lock:
            db = self._connection()
            for doc in docs:
                db.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
                db.execute(
                    "INSERT INTO documents (id, text, source, metadata) VALUES (?, ?, ?, ?)",
                    (doc.id, doc.text, doc.source, json.dumps(doc.metadata)),
                )
            db.commit()
        return [doc.id for doc in docs]

    def search(self, query: str, *, limit: int = 5) -> list[SearchHit]:
        """Return hits containing any word of ``query``, ranked by BM25."""
        words = _WORD.findall(query)
        if not words:
            return []
        match = " OR ".join('"' + word.replace('"', "") + '"' for word in words)
        with self._lock:
            rows = (
                self._connection()
                .execute(
                    "SELECT id, snippet(documents, 1, '[', ']', '...', 24), bm25(documents), "
                    "source, metadata FROM documents WHERE documents MATCH ? "
                    "ORDER BY bm25(documents) LIMIT ?",
                    (match, limit),
                )
                .fetchall()
            )
        return [
            SearchHit(
                id=row[0], snippet=row[1], score=-row[2], source=row[3], metadata=json.loads(row[4])
            )
            for row in rows
        ]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class SearchArgs(BaseModel):
    """Arguments of ``search``."""

    query: str = Field(description="Words to look for.")
    limit: int = Field(default=5, ge=1, le=50, description="Hits to return at most.")


def search_tools(provider: SearchProvider) -> list[ToolSpec]:
    """Return the ``search`` toolkit's spec, answering from ``provider``."""

    def search(query: str, limit: int) -> dict[str, object]:
        """Search ingested documents."""
        if not query.strip():
            raise ToolFailure("field 'query' is empty", type_="invalid_input")
        hits = provider.search(query, limit=limit)
        return {"query": query, "hits": [hit.model_dump(mode="json") for hit in hits]}

    return [
        ToolSpec(
            name="search",
            description="Full-text search over the documents and memories ingested for this agent.",
            input_schema=SearchArgs,
            handler=search,
            permission=None,
            idempotency="safe",
        )
    ]
