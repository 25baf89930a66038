"""Open a run's checkpointer and Store from one database URL: SQLite or PostgreSQL.

``open_backend(url)`` (sync) and ``open_async_backend(url)`` (async) are the only places that
know which backend a URL names; callers get a :class:`Backend` holding a LangGraph
checkpointer and Store (the tool ledger's table lives in the Store's database and the thread
lease's in the checkpointer's, so both follow).

- ``sqlite:///path``, or a plain path: the SQLite file, opened by
  :mod:`noema_graph.storage.sqlite.persistence` (WAL, one writer per file, damage checks).
- ``postgresql://user:password@host:port/dbname`` (or ``postgres://``): PostgreSQL through
  ``langgraph-checkpoint-postgres`` (``pip install 'noema-graph[postgres]'``), on a small
  psycopg connection pool shared by the checkpointer and the Store. Checkpoints are decoded
  with the same allow-list as on SQLite (:func:`noema_graph.storage.serde.serializer`), and
  carry the run summary in their metadata (:mod:`noema_graph.storage.postgres.savers`). The
  tables are created or migrated when the backend opens, under an advisory lock, so several
  processes may open one database at once. Given an ``embedder`` and a server with pgvector,
  the Store gets a vector index: memories are embedded on write and ranked in the database.

:data:`DATABASE_URL_ENV` is read only at the edge (the CLI), never here.

The Noema learning store follows the same URLs (:mod:`noema_graph.noema.location`), and
:mod:`noema_graph.storage.postgres.eventlog` holds the event log on PostgreSQL (each
PostgreSQL checkpointer carries its URL as :data:`EVENT_LOG_URL` for it), and
:mod:`noema_graph.storage.postgres.inspect` reads the checkpoint tables for the inspection
commands. The URL helpers every layer uses live in the leaf :mod:`noema_graph.storage.urls`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Generator, Mapping
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from noema_graph.storage.urls import (
    CONNECT_TIMEOUT_S,
    EVENT_LOG_URL,
    BackendKind,
    DatabaseUnavailable,
    backend_kind,
    connection_options,
    missing_driver_error,
    unavailable_error,
)

if TYPE_CHECKING:  # the CLI imports this module at start: LangGraph and psycopg load on use
    from langchain_core.embeddings import Embeddings
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.store.base import BaseStore
    from langgraph.store.postgres.base import PostgresIndexConfig
    from psycopg import AsyncConnection, Connection
    from psycopg.rows import DictRow

logger = logging.getLogger(__name__)

POOL_MAX_SIZE = 8
"""Connections per process: the checkpointer's (one at a time) and the Store's (per thread)."""
SETUP_LOCK = 0x6E6F656D61  # pg_advisory_lock key of table creation ("noema")


@dataclass(frozen=True)
class Backend:
    """A run's storage: a checkpointer and a Store on one database."""

    kind: BackendKind
    checkpointer: BaseCheckpointSaver[Any]
    store: BaseStore


@contextmanager
def open_backend(
    url: str | Path, *, pool_size: int = POOL_MAX_SIZE, embedder: Embeddings | None = None
) -> Generator[Backend]:
    """Open the checkpointer and Store that ``url`` names; close them at the end.

    Args:
        url: ``sqlite:///path``, a file path, or ``postgresql://...``.
        pool_size: Most PostgreSQL connections this backend opens (ignored for SQLite).
        embedder: On PostgreSQL with pgvector, the Store embeds memories with it and ranks
            them in the database (``PostgresStore`` with an ``index``); without pgvector, or
            on SQLite, the memory manager embeds and ranks in Python.

    Raises:
        ConfigurationError: the URL names no supported backend, or its driver is missing.
        DatabaseUnavailable: the PostgreSQL server did not accept a connection.
        DamagedFileError: the SQLite file is damaged (see
        :mod:`noema_graph.storage.sqlite.persistence`).
    """
    opened: AbstractContextManager[Backend] = (
        _postgres(str(url), pool_size, embedder)
        if backend_kind(url) == "postgres"
        else _sqlite(url)
    )
    with opened as backend:
        yield backend


@asynccontextmanager
async def open_async_backend(
    url: str | Path, *, pool_size: int = POOL_MAX_SIZE, embedder: Embeddings | None = None
) -> AsyncGenerator[Backend]:
    """Async :func:`open_backend`: an async checkpointer and Store (same URLs and errors)."""
    opened: AbstractAsyncContextManager[Backend] = (
        _async_postgres(str(url), pool_size, embedder)
        if backend_kind(url) == "postgres"
        else _async_sqlite(url)
    )
    async with opened as backend:
        yield backend


@contextmanager
def _sqlite(url: str | Path) -> Generator[Backend]:
    from noema_graph.storage.sqlite.persistence import sqlite_checkpointer, sqlite_store

    with sqlite_checkpointer(url) as saver, sqlite_store(url) as store:
        yield Backend("sqlite", saver, store)


@asynccontextmanager
async def _async_sqlite(url: str | Path) -> AsyncGenerator[Backend]:
    from noema_graph.storage.sqlite.persistence import async_sqlite_checkpointer, async_sqlite_store

    async with async_sqlite_checkpointer(url) as saver, async_sqlite_store(url) as store:
        yield Backend("sqlite", saver, store)


def _pool_options(pool_size: int) -> dict[str, Any]:
    """Return the options of a psycopg pool (sync or async) of at most ``pool_size``."""
    return {
        "kwargs": connection_options(),
        "min_size": 1,
        "max_size": max(2, pool_size),
        "open": False,
        "timeout": CONNECT_TIMEOUT_S,
    }


@contextmanager
def _postgres(url: str, pool_size: int, embedder: Embeddings | None) -> Generator[Backend]:
    try:
        from langgraph.store.postgres import PostgresStore
        from psycopg import Connection, OperationalError
        from psycopg_pool import ConnectionPool

        from noema_graph.storage.postgres.savers import NoemaPostgresSaver
    except ImportError as exc:
        raise missing_driver_error(exc) from exc
    from noema_graph.storage.serde import serializer

    pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(url, **_pool_options(pool_size))
    try:  # one plain connection first: its error names the cause (the pool's only times out)
        Connection.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
    except OperationalError as exc:
        raise unavailable_error(url, exc) from exc
    with pool:
        saver = NoemaPostgresSaver(pool, serde=serializer())
        setattr(saver, EVENT_LOG_URL, url)  # the observer's event log lives beside it
        with pool.connection() as conn:
            index = _vector_index(embedder, conn.execute(PGVECTOR).fetchone() is not None)
            store = PostgresStore(pool, index=index)
            _locked_setup(conn, saver, store)
        yield Backend("postgres", saver, store)


PGVECTOR = "SELECT 1 AS found FROM pg_available_extensions WHERE name = 'vector'"
"""Whether the server can create pgvector's extension (the Store's setup creates it)."""


def _vector_index(embedder: Embeddings | None, available: bool) -> PostgresIndexConfig | None:
    """Return the Store's vector index for ``embedder``, or None (memory ranks in Python)."""
    if embedder is None:
        return None
    if not available:
        logger.warning("pgvector is not installed on the server: memory is ranked in Python")
        return None
    dims = int(getattr(embedder, "dims", 0) or len(embedder.embed_query("dimensions")))
    return {"dims": dims, "embed": embedder, "fields": ["value"]}


SETUP_WAIT_S = 300.0
"""Longest wait for another process's table creation before giving up."""
TRY_LOCK = "SELECT pg_try_advisory_lock(%s) AS locked"
"""Polled, not blocking: a session blocked in ``pg_advisory_lock`` holds a snapshot, and the
holder's ``CREATE INDEX CONCURRENTLY`` waits for every older snapshot: a deadlock through
the holder's client that PostgreSQL cannot see."""


def _setup_timeout() -> DatabaseUnavailable:
    return DatabaseUnavailable(
        f"database setup: another process held the table-creation lock for {SETUP_WAIT_S:.0f} s "
        "(fix: check for a stuck noema process with pg_stat_activity, then retry)"
    )


class _SetUp(Protocol):
    def setup(self) -> None: ...


class _ASetUp(Protocol):
    async def setup(self) -> None: ...


def _locked(row: Mapping[str, object] | None) -> bool:
    return bool(row and row["locked"])


def _locked_setup(conn: Connection[DictRow], *backends: _SetUp) -> None:
    """Create or migrate the tables, one process at a time (their migrations would race)."""
    deadline = time.monotonic() + SETUP_WAIT_S
    while not _locked(conn.execute(TRY_LOCK, (SETUP_LOCK,)).fetchone()):
        if time.monotonic() > deadline:
            raise _setup_timeout()
        time.sleep(0.05)
    try:
        for backend in backends:
            backend.setup()
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))


@asynccontextmanager
async def _async_postgres(
    url: str, pool_size: int, embedder: Embeddings | None
) -> AsyncGenerator[Backend]:
    try:
        from langgraph.store.postgres.aio import AsyncPostgresStore
        from psycopg import AsyncConnection, OperationalError
        from psycopg_pool import AsyncConnectionPool

        from noema_graph.storage.postgres.savers import NoemaAsyncPostgresSaver
    except ImportError as exc:
        raise missing_driver_error(exc) from exc
    from noema_graph.storage.serde import serializer

    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        url, **_pool_options(pool_size)
    )
    try:
        await (await AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_S)).close()
    except OperationalError as exc:
        raise unavailable_error(url, exc) from exc
    async with pool:
        saver = NoemaAsyncPostgresSaver(pool, serde=serializer())
        setattr(saver, EVENT_LOG_URL, url)
        async with pool.connection() as conn:
            found = await (await conn.execute(PGVECTOR)).fetchone()
            store = AsyncPostgresStore(pool, index=_vector_index(embedder, found is not None))
            await _async_locked_setup(conn, saver, store)
        yield Backend("postgres", saver, store)


async def _async_locked_setup(conn: AsyncConnection[DictRow], *backends: _ASetUp) -> None:
    """Async :func:`_locked_setup`."""
    deadline = time.monotonic() + SETUP_WAIT_S
    while not _locked(await (await conn.execute(TRY_LOCK, (SETUP_LOCK,))).fetchone()):
        if time.monotonic() > deadline:
            raise _setup_timeout()
        await asyncio.sleep(0.05)
    try:
        for backend in backends:
            await backend.setup()
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
