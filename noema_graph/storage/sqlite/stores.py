"""LangGraph's SQLite stores, made safe to share a file with checkpoints under concurrency.

Loaded on first use by :func:`noema_graph.storage.sqlite.persistence.sqlite_store` (LangGraph's
SQLite
store loads ``sqlite_vec`` and numpy). Two changes to LangGraph's stores:

* a batch runs in ``BEGIN IMMEDIATE``: the write lock is taken first, under the busy
  timeout. LangGraph's ``BEGIN`` (deferred) reads, then upgrades to write, and SQLite refuses
  that upgrade at once ("database is locked", no waiting) when another connection wrote in
  between: concurrent async ledger claims failed that way. A failed batch rolls back.
* the async store runs each batch whole on the file's :class:`SqliteWriter` thread, so no
  transaction is held open across an ``await``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator, Iterable
from contextlib import contextmanager

import aiosqlite
from langgraph.store.base import Op, Result
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph.storage.sqlite.writer import SqliteWriter, is_busy, retrying


class NoemaSqliteStore(SqliteStore):
    """A SqliteStore whose batches take the write lock first and roll back on error."""

    def setup(self) -> None:
        """Create or migrate the tables; wait for another process doing the same at once."""
        retrying(super().setup, retry_if=_setup_race)

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Generator[sqlite3.Cursor]:
        if not self.is_setup:
            self.setup()
        with self.lock:
            if transaction:
                self.conn.execute("BEGIN IMMEDIATE")
            cur = self.conn.cursor()
            try:
                yield cur
            except BaseException:
                if transaction and self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            else:
                if transaction:
                    self.conn.execute("COMMIT")
            finally:
                cur.close()


class NoemaAsyncSqliteStore(AsyncSqliteStore):
    """An AsyncSqliteStore whose batches run whole on the file's writer thread."""

    def __init__(self, conn: aiosqlite.Connection, *, writer: SqliteWriter) -> None:
        """Read and write through ``writer`` (``conn`` serves LangGraph's own setup)."""
        super().__init__(conn)
        self.writer = writer
        self.twin: NoemaSqliteStore | None = None

    async def setup(self) -> None:
        """Set up the store tables and the writer thread's twin store."""
        await super().setup()
        if self.twin is None:
            self.twin = await self.writer.arun(lambda: _set_up(NoemaSqliteStore(self.writer.conn)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` as one transaction on the writer thread."""
        batch = list(ops)
        if self.twin is None:
            await self.setup()
        twin = self.twin
        assert twin is not None  # set by setup()
        return await self.writer.arun(lambda: twin.batch(batch))


def _setup_race(exc: BaseException) -> bool:
    """Return True when ``exc`` says another connection migrated the store at the same time."""
    if isinstance(exc, sqlite3.IntegrityError):
        return "store_migrations" in str(exc) or "vector_migrations" in str(exc)
    return is_busy(exc) or "duplicate column name" in str(exc)


def _set_up(store: NoemaSqliteStore) -> NoemaSqliteStore:
    store.setup()
    return store
