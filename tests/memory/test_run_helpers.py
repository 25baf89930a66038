"""The run helpers: persist_run then recall_context, and failures that never fail a run."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import aiosqlite
import pytest
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph.events import WarningEvent
from noema_graph.memory import (
    MemoryManager,
    MemoryUnavailable,
    apersist_run,
    arecall_context,
    persist_run,
    recall_context,
)
from tests.memory.conftest import open_store

IDS = {"user_id": "u", "agent": "a", "thread_id": "t"}


def test_persist_then_recall(store: SqliteStore) -> None:
    assert (
        persist_run(
            store,
            **IDS,
            request="Which port does the API use?",
            result="The API listens on port 8080.",
            observations=["found port 8080 in config.yaml", "  "],
        )
        is None
    )
    assert (
        persist_run(
            store,
            **IDS,
            request="Which port does the API use?",
            result="The API listens on port 8080.",
            observations=[],
        )
        is None
    )
    m = MemoryManager(store, **IDS)
    assert [e.content_type for e in m.list("persistent")] == ["run_summary"]  # idempotent
    assert [e.content_type for e in m.list("working")] == ["observation"]
    hits, unavailable = recall_context(store, **IDS, query="API port")
    assert unavailable is None
    assert len(hits) == 2


def test_no_store_or_blank_query_recalls_nothing(store: SqliteStore) -> None:
    assert recall_context(None, **IDS, query="x") == ([], None)
    assert recall_context(store, **IDS, query="  ") == ([], None)
    assert persist_run(None, **IDS, request="r", result="x") is None


def _corrupt(path: Path) -> SqliteStore:
    path.write_bytes(b"this is not a database " * 200)
    return open_store(path)


def test_corrupt_database_recall_returns_empty_with_warning(
    db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _corrupt(db_path)
    with caplog.at_level(logging.WARNING, logger="noema_graph.memory.run"):
        hits, unavailable = recall_context(store, **IDS, query="anything")
    assert hits == []
    assert isinstance(unavailable, MemoryUnavailable)
    assert unavailable.operation == "recall"
    assert unavailable.error_type == "DatabaseError"
    assert "memory recall failed" in caplog.text
    event = unavailable.to_event(run_id="r1")
    assert isinstance(event, WarningEvent)
    assert (event.code, event.run_id) == ("memory_unavailable", "r1")
    assert isinstance(persist_run(store, **IDS, request="q", result="a"), MemoryUnavailable)
    store.conn.close()


def test_locked_database_returns_warning_not_exception(db_path: Path) -> None:
    store = open_store(db_path, timeout=0.05)
    store.setup()
    locker = sqlite3.connect(db_path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        unavailable = persist_run(store, **IDS, request="q", result="a")
        assert isinstance(unavailable, MemoryUnavailable)
        assert "locked" in str(unavailable)
        hits, recall_warning = recall_context(store, **IDS, query="q")
        assert hits == []
        assert recall_warning is not None
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert persist_run(store, **IDS, request="q", result="a") is None  # recovers
    store.conn.close()


async def test_async_helpers_and_failure(db_path: Path, tmp_path: Path) -> None:
    conn = await aiosqlite.connect(db_path, isolation_level=None)
    store = AsyncSqliteStore(conn)
    assert (
        await apersist_run(
            store, **IDS, request="Which port?", result="8080", observations=["port 8080"]
        )
        is None
    )
    hits, unavailable = await arecall_context(store, **IDS, query="port")
    assert unavailable is None
    assert len(hits) == 2
    await conn.close()

    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"garbage " * 500)
    conn = await aiosqlite.connect(bad, isolation_level=None)
    store = AsyncSqliteStore(conn)
    hits, unavailable = await arecall_context(store, **IDS, query="port")
    assert hits == []
    assert unavailable is not None
    assert isinstance(await apersist_run(store, **IDS, request="q", result="a"), MemoryUnavailable)
    await conn.close()
