"""noema's own small tables beside LangGraph's: one SQL statement at a time, on any backend.

The thread lease (:mod:`noema_graph.storage.lease`) and the tool ledger
(:mod:`noema_graph.storage.ledger`) each need a statement that succeeds for exactly one
claimant (``INSERT ... ON CONFLICT ... RETURNING``), which LangGraph's ``BaseStore`` and
checkpointers do not offer. :func:`database_of` finds the database behind a checkpointer or
Store and returns a :class:`Database` that runs such statements, sync and async:

- SQLite (noema's and LangGraph's savers and stores): a short-lived connection of its own to
  the same file, in autocommit mode, so a statement never joins a transaction the saver or
  Store has open on its connection. A locked file raises ``sqlite3.OperationalError`` after
  :data:`SQLITE_BUSY_S`; callers retry (the file stays one writer at a time).
- PostgreSQL (``PostgresSaver``/``PostgresStore`` and their async forms): a connection of the
  object's pool (or its one connection, under its lock), one statement per transaction.
- In-memory savers and stores: a private in-memory SQLite database per object (the process
  is their only user, so it is exactly as atomic).

Anything else returns None: the caller decides (the ledger fails closed).
Statements are written with ``?`` placeholders; PostgreSQL gets ``%s``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

from noema_graph.errors import MisuseError

if TYPE_CHECKING:
    from aiosqlite import Connection as AioConnection

Dialect = Literal["sqlite", "postgres"]
Rows = list[tuple[object, ...]]
LEDGER_TABLE = "noema_tool_ledger"
"""The tool ledger's table (:mod:`noema_graph.storage.ledger`)."""
LEDGER_NAMESPACE = ("noema", "tool_ledger")
"""Where the ledger lived before it had its own table (Store items; still pruned)."""
SQLITE_BUSY_S = 0.05
"""How long one SQLite statement waits for a locked file before raising (callers retry)."""


@dataclass(frozen=True)
class Database:
    """Runs one statement (and returns its rows) on the database behind a saver or Store.

    ``run`` is None where only async access exists (an async PostgreSQL pool).
    """

    dialect: Dialect
    run: Callable[[str, Sequence[object]], Rows] | None
    arun: Callable[[str, Sequence[object]], Awaitable[Rows]]
    in_memory: bool = False


def _sqlite_file(path: Path) -> Database:
    """Return the database of the SQLite file ``path``."""

    def run(sql: str, params: Sequence[object]) -> Rows:
        conn = sqlite3.connect(path, timeout=SQLITE_BUSY_S, isolation_level=None)
        with closing(conn):
            conn.execute("PRAGMA synchronous=NORMAL")  # as the savers: WAL, no fsync per commit
            return [tuple(row) for row in conn.execute(sql, tuple(params)).fetchall()]

    async def arun(sql: str, params: Sequence[object]) -> Rows:
        return await asyncio.to_thread(run, sql, params)

    return Database("sqlite", run, arun)


_MEMORY: weakref.WeakKeyDictionary[object, Database] = weakref.WeakKeyDictionary()
_MEMORY_LOCK = threading.Lock()


def _memory(owner: object) -> Database:
    """Return the private in-memory database of the in-memory saver or Store ``owner``."""
    with _MEMORY_LOCK:
        found = _MEMORY.get(owner)
        if found is not None:
            return found
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        weakref.finalize(owner, conn.close)
        lock = threading.Lock()

        def run(sql: str, params: Sequence[object]) -> Rows:
            with lock:
                return [tuple(row) for row in conn.execute(sql, tuple(params)).fetchall()]

        async def arun(sql: str, params: Sequence[object]) -> Rows:
            return await asyncio.to_thread(run, sql, params)  # sqlite3 calls block the loop

        database = Database("sqlite", run, arun, in_memory=True)
        _MEMORY[owner] = database
        return database


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


def _params(params: Sequence[object]) -> tuple[object, ...] | None:
    """Return psycopg's parameters (None when there are none: ``%`` is then plain text)."""
    return tuple(params) or None


class _Cursor(Protocol):
    """A psycopg cursor, as far as :func:`_rows` reads it."""

    @property
    def description(self) -> object: ...

    def fetchall(self) -> Sequence[Iterable[object] | Mapping[str, object]]: ...


class _AsyncCursor(Protocol):
    """An async psycopg cursor, as far as :func:`_arows` reads it."""

    @property
    def description(self) -> object: ...

    async def fetchall(self) -> Sequence[Iterable[object] | Mapping[str, object]]: ...


class _Connection(Protocol):
    """A sync psycopg connection, as far as :func:`_one_connection` uses it."""

    def transaction(self) -> AbstractContextManager[object]: ...

    def execute(self, query: str, params: tuple[object, ...] | None, /) -> _Cursor: ...


class _AsyncConnection(Protocol):
    """An async psycopg connection, as far as :func:`_postgres` uses it."""

    def transaction(self) -> AbstractAsyncContextManager[object]: ...

    async def execute(self, query: str, params: tuple[object, ...] | None, /) -> _AsyncCursor: ...


class _AsyncLocked(Protocol):
    """A saver or Store holding one async connection under its ``lock``."""

    @property
    def lock(self) -> AbstractAsyncContextManager[object]: ...


class _Pool(Protocol):
    def connection(self) -> AbstractContextManager[_Connection]: ...


class _AsyncPool(Protocol):
    def connection(self) -> AbstractAsyncContextManager[_AsyncConnection]: ...


def _tuple(row: Iterable[object] | Mapping[str, object]) -> tuple[object, ...]:
    """Return a psycopg row (a dict under ``dict_row``, else a tuple) as a tuple."""
    values: Iterable[object] = row.values() if isinstance(row, dict) else row
    return tuple(values)


def _rows(cursor: _Cursor) -> Rows:
    """Return a psycopg cursor's rows as tuples ([] for a statement without rows)."""
    return [_tuple(r) for r in cursor.fetchall()] if cursor.description else []


async def _arows(cursor: _AsyncCursor) -> Rows:
    """Async :func:`_rows`."""
    return [_tuple(r) for r in await cursor.fetchall()] if cursor.description else []


def _postgres(owner: object) -> Database | None:
    """Return the database of a LangGraph PostgreSQL saver or Store, or None."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None:
        return None
    conn: object = getattr(owner, "conn", None)
    pool_module = sys.modules.get("psycopg_pool")
    if pool_module is not None and isinstance(conn, pool_module.ConnectionPool):
        pool = cast(_Pool, conn)

        def run_pool(sql: str, params: Sequence[object]) -> Rows:
            with pool.connection() as c, c.transaction():
                return _rows(c.execute(_pg(sql), _params(params)))

        return Database("postgres", run_pool, _to_thread(run_pool))
    if pool_module is not None and isinstance(conn, pool_module.AsyncConnectionPool):
        apool = cast(_AsyncPool, conn)

        async def arun_pool(sql: str, params: Sequence[object]) -> Rows:
            async with apool.connection() as c, c.transaction():
                return await _arows(await c.execute(_pg(sql), _params(params)))

        return Database("postgres", None, arun_pool)
    if isinstance(conn, psycopg.Connection):
        return _one_connection(owner, cast(_Connection, conn))
    if isinstance(conn, psycopg.AsyncConnection):
        aconn = cast(_AsyncConnection, conn)

        async def arun_conn(sql: str, params: Sequence[object]) -> Rows:
            async with cast(_AsyncLocked, owner).lock, aconn.transaction():
                return await _arows(await aconn.execute(_pg(sql), _params(params)))

        return Database("postgres", None, arun_conn)
    return None


def _one_connection(owner: object, conn: _Connection) -> Database:
    """Return the database of a saver or Store holding one sync psycopg connection."""
    lock = getattr(owner, "lock", None) or threading.Lock()

    def run(sql: str, params: Sequence[object]) -> Rows:
        with lock, conn.transaction():
            return _rows(conn.execute(_pg(sql), _params(params)))

    return Database("postgres", run, _to_thread(run))


def _to_thread(
    run: Callable[[str, Sequence[object]], Rows],
) -> Callable[[str, Sequence[object]], Awaitable[Rows]]:
    async def arun(sql: str, params: Sequence[object]) -> Rows:
        return await asyncio.to_thread(run, sql, params)

    return arun


def _sqlite_path(owner: object) -> Path | None:
    """Return the SQLite file of a saver or Store, or None (unknown, or in memory).

    noema's savers name it (``noema_path``); otherwise it is read from a sqlite3 connection:
    the object's own, or its writer's (noema's async savers and stores).
    """
    path = getattr(owner, "noema_path", None)
    if isinstance(path, Path):
        return path
    writer = getattr(owner, "writer", None)
    for conn in (getattr(owner, "conn", None), getattr(writer, "conn", None)):
        if isinstance(conn, sqlite3.Connection):
            rows = conn.execute("PRAGMA database_list").fetchall()
            main = next((str(r[2]) for r in rows if r[1] == "main"), "")
            return Path(main) if main else None
    return None


def _is_memory(owner: object) -> bool:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    return isinstance(owner, InMemorySaver | InMemoryStore)


_FOUND: weakref.WeakKeyDictionary[object, Database | None] = weakref.WeakKeyDictionary()


def database_of(owner: object) -> Database | None:
    """Return the database behind the checkpointer or Store ``owner``; None when unknown.

    A LangGraph ``AsyncSqliteSaver``/``AsyncSqliteStore`` without noema's ``path`` is found
    through :func:`adatabase_of` (its connection is async).
    """
    try:
        if owner in _FOUND:
            return _FOUND[owner]
    except TypeError:  # not weak-referenceable: not one of the known classes either
        return None
    found = _find(owner)
    _FOUND[owner] = found
    return found


def _find(owner: object) -> Database | None:
    if _is_memory(owner):
        return _memory(owner)
    path = _sqlite_path(owner)
    if path is not None:
        return _sqlite_file(path)
    return _postgres(owner)


async def adatabase_of(owner: object) -> Database | None:
    """Async :func:`database_of` (off the event loop): also finds an aiosqlite connection's file."""
    found = await asyncio.to_thread(database_of, owner)
    if found is not None:
        return found
    conn: object = getattr(owner, "conn", None)
    aiosqlite = sys.modules.get("aiosqlite")
    if aiosqlite is None or not isinstance(conn, aiosqlite.Connection):
        return None
    async with cast("AioConnection", conn).execute("PRAGMA database_list") as cursor:
        rows = await cursor.fetchall()
    main = next((str(r[2]) for r in rows if r[1] == "main"), "")
    if not main:
        return None
    database = _sqlite_file(Path(main))
    _FOUND[owner] = database
    return database


_READY: weakref.WeakKeyDictionary[Database, set[str]] = weakref.WeakKeyDictionary()
_READY_LOCK = threading.Lock()
SETUP_LOCK = 0x6E6F656D6174  # pg_advisory_xact_lock key of noema's side tables


def _setup_batches(database: Database, statements: Sequence[str]) -> list[str]:
    """Return the statements to run: PostgreSQL runs them at once under an advisory lock.

    Concurrent ``CREATE TABLE IF NOT EXISTS`` may fail on PostgreSQL (both create the type);
    SQLite serialises them itself.
    """
    if database.dialect == "sqlite":
        return list(statements)
    body = "; ".join([f"PERFORM pg_advisory_xact_lock({SETUP_LOCK})", *statements])
    return [f"DO $$ BEGIN {body}; END $$"]  # one statement: the pool prepares every one


def _ready(database: Database, key: str) -> bool:
    with _READY_LOCK:
        return key in _READY.get(database, set())


def _mark_ready(database: Database, key: str) -> None:
    with _READY_LOCK:
        _READY.setdefault(database, set()).add(key)


def ensure_tables(database: Database, key: str, statements: Sequence[str]) -> None:
    """Run the ``CREATE TABLE IF NOT EXISTS`` ``statements`` once per database and ``key``."""
    if _ready(database, key):
        return
    if database.run is None:
        raise MisuseError("ensure_tables needs sync access; use aensure_tables")
    for statement in _setup_batches(database, statements):
        database.run(statement, ())
    _mark_ready(database, key)


async def aensure_tables(database: Database, key: str, statements: Sequence[str]) -> None:
    """Async :func:`ensure_tables`."""
    if _ready(database, key):
        return
    for statement in _setup_batches(database, statements):
        await database.arun(statement, ())
    _mark_ready(database, key)
