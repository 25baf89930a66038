"""The learning store's connections: SQLite (sqlite3, aiosqlite) or PostgreSQL (psycopg 3).

:func:`connect_sync` and :func:`connect_async` open the database a location names: a path or
``sqlite:///path`` (SQLite, WAL mode) or ``postgresql://...``. Each connection runs one
:class:`~noema_graph.storage.sql.driver.Statement` at a time in its dialect; the transaction
around them is the driver's (:func:`~noema_graph.storage.sql.driver.run_sync`). psycopg is
imported only when a PostgreSQL store opens (``pip install 'noema-graph[postgres]'``).

``pooled=True`` draws connections from a per-process pool, for stores opened per call (the
domain tools open one for every call). PostgreSQL: a pool per URL (:data:`POOL_SIZE` at
most, checked before use, closed at exit); a new connection costs about 10 ms, against about
1 ms for the call itself. SQLite: closed connections are kept open for the next borrower
(:data:`SQLITE_IDLE` at most, all files together, the oldest closed first, closed at exit or
by :func:`close_pools`); a new connection parses the schema, the change journal's triggers
included, on its first statement (about 0.5 ms, more than a write call itself). A kept
connection is lent again only while its path still names the same file (a file deleted or
replaced since gets a new connection), and only outside a transaction.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, LiteralString, cast

import aiosqlite

from noema_graph.storage.sql.dialect import LOCK_TIMEOUT_MS, DialectName, dialect_of, postgres_sql
from noema_graph.storage.sql.driver import AsyncConnection, Outcome, Statement, SyncConnection
from noema_graph.storage.urls import (
    missing_driver_error,
    sqlite_path,
    store_errors,
    unavailable_error,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    import psycopg
    from psycopg.rows import DictRow
    from psycopg_pool import ConnectionPool

PRAGMAS: tuple[str, ...] = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA busy_timeout = 5000",
    "PRAGMA synchronous = NORMAL",
)
"""SQLite connection settings applied by both drivers, outside any transaction."""

CONNECT_TIMEOUT_S = 10
POOL_SIZE = 4
"""PostgreSQL connections a process keeps per URL for pooled stores."""
SQLITE_IDLE = 8
"""Idle SQLite connections a process keeps for pooled stores, all files together."""


class SqliteConnection:
    """A ``sqlite3`` connection (autocommit off by hand: the driver sends BEGIN).

    Attributes:
        raw: The ``sqlite3`` connection.
        file: The ``(device, inode)`` of the file it opened (pooled connections only).
    """

    dialect: DialectName = "sqlite"

    def __init__(self, raw: sqlite3.Connection) -> None:
        """Wrap an open connection; prefer :func:`connect_sync`."""
        self.raw = raw
        self.file: tuple[int, int] | None = None
        self._key: tuple[int, str] | None = None  # set: kept for the next borrower
        self._lent = False  # a pooled connection between borrow and close

    @classmethod
    def open(cls, path: Path, *, pooled: bool = False) -> SqliteConnection:
        """Open ``path`` with the shared pragmas and ``sqlite3.Row`` rows.

        A ``pooled`` connection may be lent to another thread later (one user at a time).
        """
        raw = sqlite3.connect(path, isolation_level=None, check_same_thread=not pooled)
        raw.row_factory = sqlite3.Row
        try:
            for pragma in PRAGMAS:
                raw.execute(pragma)
        except BaseException:
            raw.close()
            raise
        conn = cls(raw)
        if pooled and (file := _file_of(path)) is not None:
            conn.file, conn._key = file, _pool_key(path)
        return conn

    @classmethod
    def borrow(cls, path: Path) -> SqliteConnection:
        """Take a kept connection to ``path``, or open one; :meth:`close` keeps it."""
        key = _pool_key(path)
        file = _file_of(path)
        found: SqliteConnection | None = None
        stale: list[SqliteConnection] = []
        with _pools_lock:
            for n in range(len(_sqlite_idle) - 1, -1, -1):  # the newest first
                if _sqlite_idle[n][0] != key:
                    continue
                conn = _sqlite_idle.pop(n)[1]
                if file is not None and conn.file == file:
                    found = conn
                    break
                stale.append(conn)  # the path names another file now
        for conn in stale:
            conn.raw.close()
        found = found if found is not None else cls.open(path, pooled=True)
        found._lent = True
        return found

    def run_statement(self, stmt: Statement) -> Outcome:
        """Execute ``stmt``."""
        if stmt.many is not None:
            cursor = self.raw.executemany(stmt.sql, stmt.many)
            return Outcome([], cursor.lastrowid, cursor.rowcount)
        cursor = self.raw.execute(stmt.sql, stmt.params)
        rows: list[sqlite3.Row] = cursor.fetchall()
        return Outcome(rows, cursor.lastrowid, cursor.rowcount)

    def close(self) -> None:
        """Close the connection; a pooled one is kept for the next borrower instead."""
        if self._key is None:
            self.raw.close()
        elif self._lent:  # closing twice must not lend it twice
            self._lent = False
            if not _keep(self, self._key):
                self.raw.close()


def _file_of(path: Path) -> tuple[int, int] | None:
    """Return the ``(device, inode)`` of the file at ``path``, None if there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def _pool_key(path: Path) -> tuple[int, str]:
    return (os.getpid(), os.path.abspath(path))  # a forked child opens its own


_sqlite_idle: list[tuple[tuple[int, str], SqliteConnection]] = []


def _keep(conn: SqliteConnection, key: tuple[int, str]) -> bool:
    """Keep ``conn`` for the next borrower of its file; False: it cannot be kept."""
    if conn.raw.in_transaction:  # the driver ends its transactions; never lend one open
        try:
            conn.raw.rollback()
        except sqlite3.Error:
            return False
    with _pools_lock:
        _close_at_exit()
        _sqlite_idle.append((key, conn))
        oldest = _sqlite_idle.pop(0)[1] if len(_sqlite_idle) > SQLITE_IDLE else None
    if oldest is not None:
        oldest.raw.close()
    return True


class AsyncSqliteConnection:
    """An ``aiosqlite`` connection; the async twin of :class:`SqliteConnection`."""

    dialect: DialectName = "sqlite"

    def __init__(self, raw: aiosqlite.Connection) -> None:
        """Wrap an open connection; prefer :func:`connect_async`."""
        self.raw = raw

    @classmethod
    async def open(cls, path: Path) -> AsyncSqliteConnection:
        """Open ``path`` with the shared pragmas and ``sqlite3.Row`` rows."""
        raw = await aiosqlite.connect(path, isolation_level=None)
        raw.row_factory = sqlite3.Row
        for pragma in PRAGMAS:
            await raw.execute(pragma)
        return cls(raw)

    async def run_statement(self, stmt: Statement) -> Outcome:
        """Execute ``stmt``."""
        if stmt.many is not None:
            cursor = await self.raw.executemany(stmt.sql, stmt.many)
            return Outcome([], cursor.lastrowid, cursor.rowcount)
        cursor = await self.raw.execute(stmt.sql, stmt.params)
        rows = list(await cursor.fetchall())
        await cursor.close()
        return Outcome(rows, cursor.lastrowid, cursor.rowcount)

    async def close(self) -> None:
        """Close the connection."""
        await self.raw.close()


def _postgres_text(stmt: Statement) -> LiteralString:
    """Return ``stmt``'s PostgreSQL text; it is the code's own SQL, values travel as params."""
    sql = postgres_sql(stmt.postgres if stmt.postgres is not None else stmt.sql)
    return cast("LiteralString", f"{sql} RETURNING id" if stmt.returns_id else sql)


def _postgres_outcome(rows: list[DictRow], returns_id: bool, rowcount: int) -> Outcome:
    lastrowid = int(rows[0]["id"]) if returns_id and rows else None
    return Outcome(rows, lastrowid, rowcount)


def _connect_options(url: str) -> dict[str, Any]:
    """Return psycopg's connection settings of the learning store (sync and async alike)."""
    from psycopg.rows import dict_row

    return {
        "autocommit": True,  # the driver sends BEGIN and COMMIT itself
        "row_factory": dict_row,
        "connect_timeout": CONNECT_TIMEOUT_S,
        "options": _server_options(url),
    }


def _server_options(url: str) -> str:
    """Return the URL's own ``options`` with the writers' lock wait capped (``lock_timeout``)."""
    from psycopg.conninfo import conninfo_to_dict

    given = str(conninfo_to_dict(url).get("options") or "")
    return f"{given} -c lock_timeout={LOCK_TIMEOUT_MS}".strip()


def _import_psycopg() -> None:
    if importlib.util.find_spec("psycopg") is None:
        raise missing_driver_error(ImportError("No module named 'psycopg'", name="psycopg"))


class PostgresConnection:
    """A psycopg connection to the PostgreSQL database of a ``postgresql://`` URL."""

    dialect: DialectName = "postgres"

    def __init__(
        self,
        raw: psycopg.Connection[DictRow],
        release: Callable[[psycopg.Connection[DictRow]], None] | None = None,
    ) -> None:
        """Wrap an open connection (``release`` gives it back to its pool); see :meth:`open`."""
        self.raw = raw
        self._release = release

    @classmethod
    def open(cls, url: str) -> PostgresConnection:
        """Connect to ``url``.

        Raises:
            ConfigurationError: psycopg is not installed.
            DatabaseUnavailable: the server refused or could not be reached.
        """
        _import_psycopg()
        import psycopg
        from psycopg.rows import DictRow

        try:
            raw = psycopg.Connection[DictRow].connect(url, **_connect_options(url))
        except psycopg.OperationalError as exc:
            raise unavailable_error(url, exc) from exc
        return cls(raw)

    def run_statement(self, stmt: Statement) -> Outcome:
        """Execute ``stmt`` with psycopg's placeholders (``RETURNING id`` when asked)."""
        sql = _postgres_text(stmt)
        with self.raw.cursor() as cursor:
            if stmt.many is not None:
                cursor.executemany(sql, stmt.many)
                return Outcome([], None, cursor.rowcount)
            cursor.execute(sql, stmt.params)
            rows = cursor.fetchall() if cursor.description is not None else []
            return _postgres_outcome(rows, stmt.returns_id, cursor.rowcount)

    @classmethod
    def borrow(cls, url: str) -> PostgresConnection:
        """Take a connection to ``url`` from this process's pool (same errors as :meth:`open`)."""
        _import_psycopg()
        from psycopg_pool import PoolTimeout

        pool = _pool(url)
        try:
            raw = pool.getconn()
        except PoolTimeout as exc:
            raise unavailable_error(url, exc) from exc
        return cls(raw, pool.putconn)

    def close(self) -> None:
        """Close the connection, or give it back to its pool."""
        if self._release is not None:
            self._release(self.raw)
        else:
            self.raw.close()


_pools: dict[tuple[int, str], ConnectionPool[psycopg.Connection[DictRow]]] = {}
_pools_lock = threading.Lock()


def _pool(url: str) -> ConnectionPool[psycopg.Connection[DictRow]]:
    """Return this process's pool for ``url``, opening it (and checking the server) once."""
    import psycopg
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import ConnectionPool

    key = (os.getpid(), url)  # a forked child must not share its parent's sockets
    with _pools_lock:
        if (found := _pools.get(key)) is not None:
            return found
        PostgresConnection.open(url).close()  # a plain connection's error names the cause
        pool = ConnectionPool(
            url,
            connection_class=psycopg.Connection[DictRow],
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "connect_timeout": CONNECT_TIMEOUT_S,
                "options": _server_options(url),
            },
            min_size=1,
            max_size=POOL_SIZE,
            open=False,
            timeout=CONNECT_TIMEOUT_S,
            check=_check,  # a restarted server's dead sockets
        )
        pool.open()
        _close_at_exit()
        _pools[key] = pool
        return pool


_exit_hook: list[bool] = []


def _close_at_exit() -> None:
    """Register :func:`close_pools` to run at exit, once (under ``_pools_lock``)."""
    if not _exit_hook:
        atexit.register(close_pools)
        _exit_hook.append(True)


def _check(conn: psycopg.Connection[DictRow]) -> None:
    """Fail on a dead connection before it is lent (the pool then opens another)."""
    conn.execute("SELECT 1")


def close_pools() -> None:
    """Close this process's pooled connections, PostgreSQL and SQLite (also done at exit)."""
    with _pools_lock:
        pools = [pool for (pid, _), pool in _pools.items() if pid == os.getpid()]
        _pools.clear()
        kept = [conn for (pid, _), conn in _sqlite_idle if pid == os.getpid()]
        _sqlite_idle.clear()
    for pool in pools:
        pool.close()
    for conn in kept:
        conn.raw.close()


class AsyncPostgresConnection:
    """An async psycopg connection; the async twin of :class:`PostgresConnection`."""

    dialect: DialectName = "postgres"

    def __init__(self, raw: psycopg.AsyncConnection[DictRow]) -> None:
        """Wrap an open connection; prefer :func:`connect_async`."""
        self.raw = raw

    @classmethod
    async def open(cls, url: str) -> AsyncPostgresConnection:
        """Connect to ``url`` (same errors as :meth:`PostgresConnection.open`)."""
        _import_psycopg()
        import psycopg
        from psycopg.rows import DictRow

        try:
            raw = await psycopg.AsyncConnection[DictRow].connect(url, **_connect_options(url))
        except psycopg.OperationalError as exc:
            raise unavailable_error(url, exc) from exc
        return cls(raw)

    async def run_statement(self, stmt: Statement) -> Outcome:
        """Execute ``stmt`` with psycopg's placeholders (``RETURNING id`` when asked)."""
        sql = _postgres_text(stmt)
        async with self.raw.cursor() as cursor:
            if stmt.many is not None:
                await cursor.executemany(sql, stmt.many)
                return Outcome([], None, cursor.rowcount)
            await cursor.execute(sql, stmt.params)
            rows = await cursor.fetchall() if cursor.description is not None else []
            return _postgres_outcome(rows, stmt.returns_id, cursor.rowcount)

    async def close(self) -> None:
        """Close the connection."""
        await self.raw.close()


def connect_sync(location: str | Path, *, pooled: bool = False) -> SyncConnection:
    """Open the learning store database at ``location`` (a path or a database URL).

    Args:
        location: A SQLite path or ``sqlite:///`` URL, or a ``postgresql://`` URL.
        pooled: Borrow from this process's pool (``close`` gives it back); see the module.

    Raises:
        ConfigurationError: an unsupported URL, or PostgreSQL without psycopg installed.
        DatabaseUnavailable: the PostgreSQL server could not be reached.
    """
    if dialect_of(location) == "postgres":
        url = str(location)
        return PostgresConnection.borrow(url) if pooled else PostgresConnection.open(url)
    path = sqlite_path(location)
    if pooled and str(path) != ":memory:":
        return SqliteConnection.borrow(path)
    return SqliteConnection.open(path)


async def connect_async(location: str | Path) -> AsyncConnection:
    """Async twin of :func:`connect_sync`."""
    if dialect_of(location) == "postgres":
        return await AsyncPostgresConnection.open(str(location))
    return await AsyncSqliteConnection.open(sqlite_path(location))


def database_errors() -> tuple[type[BaseException], ...]:
    """Return the database errors a store may raise (psycopg's once it is loaded)."""
    return store_errors()
