"""Recall writes nothing: the SQLite file's bytes and rows are the same before and after."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import aiosqlite
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph.memory import MemoryManager, arecall_context, recall_context
from tests.memory.conftest import HashEmbeddings, open_store

# A Store that refreshes TTLs on read would rewrite expires_at if recall forgot refresh_ttl=False.
TTL = {"refresh_on_read": True, "default_ttl": 60.0}


def _fill(path: Path) -> None:
    store = open_store(path, ttl=TTL)
    m = MemoryManager(store, user_id="u", agent="a", thread_id="t", embedder=HashEmbeddings())
    m.store("p", "the user likes green tea", "fact", "persistent", ttl_s=3600)
    m.store("w", "green tea was ordered", "observation", "working", ttl_s=3600)
    store.conn.close()


def _snapshot(path: Path) -> tuple[str, list[tuple[object, ...]]]:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT prefix, key, value, updated_at, expires_at FROM store ORDER BY prefix, key"
        ).fetchall()
    return digest, rows


def test_recall_context_does_not_write(db_path: Path) -> None:
    _fill(db_path)
    before = _snapshot(db_path)
    store = open_store(db_path, ttl=TTL)
    changes = store.conn.total_changes
    for embedder in (None, HashEmbeddings()):
        hits, unavailable = recall_context(
            store, user_id="u", agent="a", thread_id="t", query="green tea", embedder=embedder
        )
        assert unavailable is None
        assert {h.entry.key for h in hits} == {"p", "w"}
    assert store.conn.total_changes == changes
    store.conn.close()
    assert _snapshot(db_path) == before


async def test_arecall_context_does_not_write(db_path: Path) -> None:
    _fill(db_path)
    before = _snapshot(db_path)
    conn = await aiosqlite.connect(db_path, isolation_level=None)
    store = AsyncSqliteStore(conn, ttl=TTL)  # type: ignore[arg-type]
    hits, unavailable = await arecall_context(
        store, user_id="u", agent="a", thread_id="t", query="green tea"
    )
    assert unavailable is None
    assert len(hits) == 2
    assert conn.total_changes == 0
    await conn.close()
    assert _snapshot(db_path) == before
