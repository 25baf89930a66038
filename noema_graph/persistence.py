"""Open checkpointers and stores; the one place that knows about storage backends.

``sqlite_checkpointer(path)`` and ``async_sqlite_checkpointer(path)`` open a SQLite file in
WAL mode with a busy timeout and a deserialisation allow-list: a checkpoint can only revive
LangGraph's own safe types, LangChain messages and the classes in
:data:`noema_graph.state.models.STATE_MODELS`. ``open_checkpointer(url)`` dispatches on a URL
so another backend (PostgreSQL) can plug in later.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph.errors import ConfigurationError
from noema_graph.state.models import STATE_MODELS

BUSY_TIMEOUT_MS = 5_000
# LangChain message classes a checkpoint may hold (besides LangGraph's built-in safe types).
MESSAGE_TYPES: tuple[tuple[str, ...], ...] = tuple(
    ("langchain_core.messages." + module, name)
    for module, name in (
        ("human", "HumanMessage"),
        ("ai", "AIMessage"),
        ("ai", "AIMessageChunk"),
        ("system", "SystemMessage"),
        ("tool", "ToolMessage"),
        ("tool", "ToolMessageChunk"),
    )
)


def serializer() -> JsonPlusSerializer:
    """Return a serializer that revives only allow-listed classes (no pickle)."""
    allowed = [*MESSAGE_TYPES, *((m.__module__, m.__name__) for m in STATE_MODELS)]
    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=allowed)


def _sqlite_path(path: str | Path) -> Path:
    text = str(path)
    if text.startswith("sqlite:///"):
        text = text.removeprefix("sqlite:///")
    elif "://" in text:
        scheme = text.split("://", 1)[0]
        raise ConfigurationError(
            "checkpointer url", f"unsupported scheme {scheme!r}",
            fix="use a file path or sqlite:///path (PostgreSQL is not wired yet)",
        )
    target = Path(text).expanduser()
    if target.is_dir():
        raise ConfigurationError("checkpointer path", f"{target} is a directory",
                                 fix="pass a file path such as runs.sqlite")
    if not target.parent.exists():
        raise ConfigurationError("checkpointer path", f"folder {target.parent} does not exist",
                                 fix="create the folder first or choose another path")
    return target


def connect(path: str | Path) -> sqlite3.Connection:
    """Open a SQLite connection in WAL mode with a busy timeout, shareable across threads."""
    conn = sqlite3.connect(
        _sqlite_path(path), check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@contextmanager
def sqlite_checkpointer(path: str | Path) -> Iterator[SqliteSaver]:
    """Open a SqliteSaver on ``path`` (WAL, busy timeout, allow-listed deserialisation)."""
    conn = connect(path)
    try:
        saver = SqliteSaver(conn, serde=serializer())
        saver.setup()
        yield saver
    finally:
        conn.close()


@asynccontextmanager
async def async_sqlite_checkpointer(path: str | Path) -> AsyncIterator[AsyncSqliteSaver]:
    """Open an AsyncSqliteSaver on ``path`` through aiosqlite, configured as the sync one."""
    conn = await aiosqlite.connect(_sqlite_path(path), timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        saver = AsyncSqliteSaver(conn, serde=serializer())
        await saver.setup()
        yield saver
    finally:
        await conn.close()


@contextmanager
def sqlite_store(path: str | Path) -> Iterator[SqliteStore]:
    """Open a LangGraph SqliteStore on ``path`` (may be the checkpoint file)."""
    conn = connect(path)
    try:
        store = SqliteStore(conn)
        store.setup()
        yield store
    finally:
        conn.close()


@asynccontextmanager
async def async_sqlite_store(path: str | Path) -> AsyncIterator[AsyncSqliteStore]:
    """Open a LangGraph AsyncSqliteStore on ``path``."""
    conn = await aiosqlite.connect(_sqlite_path(path), timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        await conn.execute("PRAGMA journal_mode=WAL")
        store = AsyncSqliteStore(conn)
        await store.setup()
        yield store
    finally:
        await conn.close()


open_checkpointer = sqlite_checkpointer


def prune(path: str | Path, *, keep_last: int, vacuum: bool = True) -> int:
    """Keep the newest ``keep_last`` checkpoints of every thread; return how many went.

    Writes of removed checkpoints go too. Delta channels are rebuilt from ancestor writes,
    so this refuses to prune threads below one checkpoint: ``keep_last`` must be >= 1, and
    the newest checkpoint of a thread always keeps a full snapshot of its values.
    """
    if keep_last < 1:
        raise ConfigurationError("keep_last", f"must be >= 1, got {keep_last}",
                                 fix="keep at least the latest checkpoint")
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        doomed = conn.execute(
            """
            SELECT thread_id, checkpoint_ns, checkpoint_id FROM (
                SELECT thread_id, checkpoint_ns, checkpoint_id,
                       ROW_NUMBER() OVER (PARTITION BY thread_id, checkpoint_ns
                                          ORDER BY checkpoint_id DESC) AS rank
                FROM checkpoints)
            WHERE rank > ?
            """,
            (keep_last,),
        ).fetchall()
        conn.executemany(
            "DELETE FROM checkpoints WHERE thread_id=? AND checkpoint_ns=? AND checkpoint_id=?",
            doomed,
        )
        conn.executemany(
            "DELETE FROM writes WHERE thread_id=? AND checkpoint_ns=? AND checkpoint_id=?",
            doomed,
        )
        conn.execute("COMMIT")
        if vacuum:
            conn.execute("VACUUM")
        return len(doomed)
    finally:
        conn.close()
