"""Open checkpointers and stores; the one place that knows about storage backends.

``sqlite_checkpointer(path)`` and ``async_sqlite_checkpointer(path)`` open a SQLite file in
WAL mode with a busy timeout, in LangGraph's stock format unless ``compact=True`` or the file
is compact (:mod:`noema_graph.storage.sqlite.format`), and with a deserialisation allow-list: a
checkpoint can only revive LangGraph's own safe types, LangChain messages and the classes in
:data:`noema_graph.state.models.STATE_MODELS`. A database URL that may name PostgreSQL goes
through :func:`noema_graph.storage.backends.open_backend`, which opens SQLite files here.

Async checkpointers and stores of one file write through one writer thread per process
(:mod:`noema_graph.storage.sqlite.writer`); store batches take the write lock first
(:mod:`noema_graph.storage.sqlite.stores`). A file that is not SQLite, or that SQLite or a decoder
finds
damaged, raises :class:`~noema_graph.storage.sqlite.damage.DamagedFileError` naming the file, the
thread and
the fix; ``check=True`` runs ``PRAGMA quick_check`` when the file is opened.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, closing, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from noema_graph.state.agent import DELTA_CHANNELS  # re-exported: readers replay them
from noema_graph.storage.serde import serializer
from noema_graph.storage.sqlite.connection import (
    BUSY_TIMEOUT_MS,
    PRAGMAS,
    connect,
    quick_check,
    sqlite_file,
)
from noema_graph.storage.sqlite.damage import corrupt_file, is_corrupt
from noema_graph.storage.sqlite.format import mark_compact, writes_compact
from noema_graph.storage.sqlite.retention import check_limits, prune_saver
from noema_graph.storage.sqlite.savers import NoemaAsyncSqliteSaver, NoemaSqliteSaver
from noema_graph.storage.sqlite.writer import SqliteWriter, shared_writer

if TYPE_CHECKING:  # langgraph.store.sqlite loads sqlite_vec and numpy (~0.15 s): at first use
    from langgraph.store.sqlite import SqliteStore
    from langgraph.store.sqlite.aio import AsyncSqliteStore

CheckpointerArg = BaseCheckpointSaver[Any] | bool | None
"""What graph factories accept as ``checkpointer`` (as LangGraph's compile does)."""


class _SetUp(Protocol):
    def setup(self) -> None: ...


class _AsyncSetUp(Protocol):
    async def setup(self) -> None: ...


B = TypeVar("B", bound=_SetUp)
AB = TypeVar("AB", bound=_AsyncSetUp)


@contextmanager
def _naming_damage(target: Path) -> Generator[None]:
    """Turn SQLite's "malformed" errors raised while the file is open into DamagedFileError."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        raise corrupt_file(target, exc) from exc


@contextmanager
def _backend(
    path: str | Path, make: Callable[[sqlite3.Connection], B], *, check: bool = False
) -> Generator[B]:
    """Yield ``make(conn)``, set up, over a new connection to ``path``; close it at the end.

    ``check`` runs :func:`quick_check` first. SQLite's "malformed" errors, at setup or later
    while the file is open, become :class:`DamagedFileError` naming the file.
    """
    target = sqlite_file(path)
    with closing(connect(target)) as conn, _naming_damage(target):
        if check:
            quick_check(conn, target)
        backend = make(conn)
        backend.setup()
        yield backend


@asynccontextmanager
async def _async_backend(
    path: str | Path,
    make: Callable[[aiosqlite.Connection, SqliteWriter], AB],
    *,
    isolation_level: str | None,
    check: bool = False,
) -> AsyncGenerator[AB]:
    """Async :func:`_backend` over aiosqlite (same :data:`PRAGMAS`).

    Writes go through the file's :class:`SqliteWriter`, shared by every async checkpointer and
    store of the file in this process.
    """
    target = sqlite_file(path)
    with shared_writer(target, connect) as writer, _naming_damage(target):
        if check:
            await writer.arun(lambda: quick_check(writer.conn, target))
        conn = await aiosqlite.connect(
            target, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=isolation_level
        )
        try:
            for pragma in PRAGMAS:
                await conn.execute(pragma)
            backend = make(conn, writer)
            await backend.setup()
            yield backend
        finally:
            await conn.close()


@contextmanager
def sqlite_checkpointer(
    path: str | Path, *, check: bool = False, compact: bool = False
) -> Generator[SqliteSaver]:
    """Open a SqliteSaver on ``path`` (WAL, busy timeout, allow-listed deserialisation).

    Args:
        path: The SQLite file (created if missing).
        check: Run SQLite's ``PRAGMA quick_check`` before use (reads the whole file).
        compact: Write the compact format (large values compressed, output contracts'
            steps stored once; about half the size; LangGraph's saver reads it only with
            :func:`serializer`) and mark the file so. A file already compact stays compact
            without it (see :mod:`noema_graph.storage.sqlite.format`); otherwise the file is stock:
            LangGraph's own ``SqliteSaver`` reads it with its default serializer.

    Raises:
        DamagedFileError: the file is not a SQLite database or is damaged (also raised later,
            by reads that meet damage), naming the file, the thread and the fix.
    """
    target = sqlite_file(path)

    def make(conn: sqlite3.Connection) -> SqliteSaver:
        packed = writes_compact(conn, compact)
        serde = serializer(compact=packed, compress=packed)
        return NoemaSqliteSaver(conn, serde=serde, path=target, compact=packed)

    with _backend(target, make, check=check) as saver:
        yield saver


@asynccontextmanager
async def async_sqlite_checkpointer(
    path: str | Path, *, check: bool = False, compact: bool = False
) -> AsyncGenerator[AsyncSqliteSaver]:
    """Open an AsyncSqliteSaver on ``path`` through aiosqlite, configured as the sync one.

    ``check``, ``compact`` and the errors are those of :func:`sqlite_checkpointer`.
    """
    target = sqlite_file(path)
    with closing(connect(target)) as conn, _naming_damage(target):
        packed = writes_compact(conn, compact)

    def make(conn: aiosqlite.Connection, writer: SqliteWriter) -> AsyncSqliteSaver:
        serde = serializer(compact=packed, compress=packed)
        return NoemaAsyncSqliteSaver(conn, serde=serde, writer=writer, path=target, compact=packed)

    # "" is sqlite3's default: implicit deferred transactions, which the saver commits
    async with _async_backend(target, make, isolation_level="", check=check) as saver:
        yield saver


@contextmanager
def sqlite_store(path: str | Path) -> Generator[SqliteStore]:
    """Open a LangGraph SqliteStore on ``path`` (may be the checkpoint file).

    Each batch takes the write lock first (``BEGIN IMMEDIATE``), so concurrent writers wait
    under the busy timeout instead of failing (see :mod:`noema_graph.storage.sqlite.stores`).
    """
    from noema_graph.storage.sqlite.stores import NoemaSqliteStore

    with _backend(path, NoemaSqliteStore) as store:
        yield store


@asynccontextmanager
async def async_sqlite_store(path: str | Path) -> AsyncGenerator[AsyncSqliteStore]:
    """Open a LangGraph AsyncSqliteStore on ``path`` (may be the checkpoint file).

    Its batches run whole on the file's writer thread, shared with an async checkpointer of
    the same file (see :mod:`noema_graph.storage.sqlite.writer`).
    """
    from noema_graph.storage.sqlite.stores import NoemaAsyncSqliteStore

    def make(conn: aiosqlite.Connection, writer: SqliteWriter) -> AsyncSqliteStore:
        return NoemaAsyncSqliteStore(conn, writer=writer)

    async with _async_backend(path, make, isolation_level=None) as store:
        yield store


open_checkpointer = sqlite_checkpointer


def make_compact(path: str | Path) -> None:
    """Mark the SQLite file ``path`` compact (created if missing).

    Every writer of the file then writes the compact format
    (:mod:`noema_graph.storage.sqlite.format`).
    """
    target = sqlite_file(path)
    with closing(connect(target)) as conn, _naming_damage(target):
        mark_compact(conn)


def prune(
    path: str | Path,
    *,
    keep_last: int | None = None,
    older_than: timedelta | float | None = None,
    vacuum: bool = True,
) -> int:
    """Delete old checkpoints and threads of the SQLite file ``path``; return how many went.

    A checkpoint goes when it is not among its thread's newest ``keep_last`` or is older than
    ``older_than`` (a timedelta, or seconds). A thread left with no checkpoint goes whole,
    with its writes, event-log rows and tool-ledger entries; a thread that keeps some keeps
    them resumable (its oldest kept checkpoint gets a full snapshot of messages, trace and
    output). All of it in one transaction, then the file is vacuumed. See
    :mod:`noema_graph.storage.sqlite.retention`.

    Raises:
        ConfigurationError: neither limit given, ``keep_last`` < 1 or ``older_than`` < 0.
    """
    check_limits(keep_last, older_than)
    with sqlite_checkpointer(path) as saver:
        decided = prune_saver(
            saver, list(DELTA_CHANNELS), keep_last=keep_last, older_than=older_than
        )
        if vacuum:
            saver.conn.execute("VACUUM")
    return len(decided.doomed) + decided.dropped_checkpoints
