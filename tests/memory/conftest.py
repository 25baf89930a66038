"""Fixtures of the memory tests: real SQLite Store files (sync and async) and a fake embedder."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph.memory.keyword import tokenize

DATASET = Path(__file__).with_name("recall_dataset.json")


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words vectors: texts sharing stemmed words are similar."""

    name = "test/hash-bow"

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self.calls = 0

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dims
        for token in tokenize(text):
            vec[int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dims] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self._vector(text)


@pytest.fixture
def dataset() -> dict[str, Any]:
    return json.loads(DATASET.read_text())


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite"


def open_store(path: Path, *, timeout: float = 5.0, **kwargs: Any) -> SqliteStore:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout)
    return SqliteStore(conn, **kwargs)


@pytest.fixture
def store(db_path: Path) -> Iterator[SqliteStore]:
    s = open_store(db_path)
    s.setup()
    yield s
    s.conn.close()


@pytest.fixture
async def astore(db_path: Path) -> AsyncIterator[AsyncSqliteStore]:
    conn = await aiosqlite.connect(db_path, isolation_level=None)
    s = AsyncSqliteStore(conn)
    await s.setup()
    yield s
    await conn.close()
