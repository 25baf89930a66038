"""One writer per SQLite file and process: each write transaction runs whole on one thread.

The async checkpointer and store of :mod:`noema_graph.storage.sqlite.persistence` send every write
through
the :class:`SqliteWriter` of their file. A transaction then never stays open across an
``await``: a blocking SQLite call on the event loop (an event log append, say) cannot wait on
a lock whose holder needs that same loop to commit, and a cancelled task cannot leave the
file locked. Writes of one process never compete with each other for the file's lock; other
processes are waited for by SQLite's busy timeout, and a write that still finds the file busy
is retried (:func:`retrying`) until :data:`RETRY_S` has passed.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

RETRY_S = 5.0
"""How long a write that finds the file busy is retried (SQLite's busy timeout, again)."""
FIRST_DELAY_S = 0.005
MAX_DELAY_S = 0.2
_BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def is_busy(exc: BaseException) -> bool:
    """Return True when ``exc`` (or an error it wraps) is SQLite's "database is locked/busy".

    LangGraph's stores wrap some SQLite errors in a ``ValueError``; the cause chain is read.
    """
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, sqlite3.OperationalError):
            code = getattr(seen, "sqlite_errorcode", None)
            if code is not None and code & 0xFF in _BUSY_CODES:
                return True
            text = str(seen)
            if "database is locked" in text or "database is busy" in text:
                return True
        seen = seen.__cause__ or seen.__context__
    return False


def retrying(
    work: Callable[[], T],
    *,
    deadline_s: float = RETRY_S,
    retry_if: Callable[[BaseException], bool] = is_busy,
) -> T:
    """Run ``work``; while it fails because the file is busy, wait and run it again.

    Only for work that is safe to repeat after a busy error (an upsert, a read, a transaction
    that rolled back). The last error is raised once ``deadline_s`` has passed. ``retry_if``
    says which errors are worth another try (default: :func:`is_busy`).
    """
    deadline = time.monotonic() + deadline_s
    delay = FIRST_DELAY_S
    while True:
        try:
            return work()
        except (sqlite3.Error, ValueError) as exc:
            if not retry_if(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, MAX_DELAY_S)


def in_transaction(conn: sqlite3.Connection, work: Callable[[], T]) -> T:
    """Run ``work`` inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` on ``conn``; roll back on error.

    ``IMMEDIATE`` takes the write lock first (waiting for it under the busy timeout), so a
    statement inside never fails with "database is locked" halfway. ``work`` may commit
    itself (LangGraph's savers call ``commit()``).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work()
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    if conn.in_transaction:
        conn.execute("COMMIT")
    return result


class SqliteWriter:
    """A connection to one file and the one thread that writes through it.

    ``run`` and ``arun`` queue a unit of work (a whole transaction) and wait for it, blocking
    or awaiting; units run one at a time, in order, retried while the file is busy.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        """Write through ``conn`` (opened with ``check_same_thread=False``)."""
        self.conn = conn
        self.users = 0
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="noema-sqlite-writer")

    def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the writer thread and return its result (blocking)."""
        return self._pool.submit(retrying, work).result()

    async def arun(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the writer thread and return its result (awaiting).

        Cancelling the awaiting task does not stop a unit that has started: it still commits
        or rolls back as a whole.
        """
        return await asyncio.wrap_future(self._pool.submit(retrying, work))

    def close(self) -> None:
        """Finish the queued work, stop the thread and close the connection."""
        self._pool.shutdown(wait=True)
        self.conn.close()


_WRITERS: dict[tuple[int, Path], SqliteWriter] = {}
_LOCK = threading.Lock()


@contextmanager
def shared_writer(
    path: Path, connect: Callable[[Path], sqlite3.Connection]
) -> Generator[SqliteWriter]:
    """Yield this process's writer of ``path``, opened with ``connect`` on first use.

    Every open checkpointer and store of the file shares it; the last to close closes it.
    """
    key = (os.getpid(), path.resolve())
    with _LOCK:
        writer = _WRITERS.get(key)
        if writer is None:
            writer = _WRITERS[key] = SqliteWriter(connect(path))
        writer.users += 1
    try:
        yield writer
    finally:
        with _LOCK:
            writer.users -= 1
            last = writer.users == 0
            if last:
                del _WRITERS[key]
        if last:
            writer.close()
