"""An append-only event log in SQLite: what every run did, written as it happens.

Each tool call is logged twice: ``tool.invoked`` is committed *before* the tool runs
(log-before-execute) and ``tool.completed`` after it returns, so after a crash the log still
shows the call that was in flight (:meth:`EventLog.in_flight`). Runs log ``agent.started``,
``plan.created``, ``plan.revised``, ``reflection``, ``limit.hit``, ``error``,
``agent.paused`` (waiting for a person) and ``agent.completed``. Triggers refuse UPDATE and
DELETE on the table.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from noema_graph.closing import Closeable
from noema_graph.errors import ConfigurationError
from noema_graph.state.models import utc_now
from noema_graph.storage.sqlite.connection import connect

if TYPE_CHECKING:
    from langgraph.checkpoint.sqlite import SqliteSaver

TABLE = "noema_events"
EVENT_TYPES: tuple[str, ...] = (
    "agent.started",
    "agent.completed",
    "agent.paused",
    "agent.failed",
    "plan.created",
    "plan.revised",
    "reflection",
    "tool.invoked",
    "tool.completed",
    "limit.hit",
    "error",
)
_NO_DELETE = f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_no_delete BEFORE DELETE ON {TABLE}
BEGIN SELECT RAISE(ABORT, '{TABLE} is append-only'); END;"""
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ts TEXT NOT NULL,
    type TEXT NOT NULL,
    thread_id TEXT,
    trace_id TEXT,
    run_id TEXT,
    agent TEXT,
    user_id TEXT,
    correlation_id TEXT,
    step INTEGER,
    call_id TEXT,
    tool TEXT,
    status TEXT,
    data TEXT NOT NULL DEFAULT '{{}}'
);
CREATE INDEX IF NOT EXISTS {TABLE}_thread ON {TABLE}(thread_id, seq);
CREATE INDEX IF NOT EXISTS {TABLE}_trace ON {TABLE}(trace_id, seq);
CREATE TRIGGER IF NOT EXISTS {TABLE}_no_update BEFORE UPDATE ON {TABLE}
BEGIN SELECT RAISE(ABORT, '{TABLE} is append-only'); END;
{_NO_DELETE}
"""
_COLUMNS = (
    "seq",
    "ts",
    "type",
    "thread_id",
    "trace_id",
    "run_id",
    "agent",
    "user_id",
    "correlation_id",
    "step",
    "call_id",
    "tool",
    "status",
    "data",
)


@dataclass(frozen=True)
class LoggedEvent:
    """One row of the event log."""

    seq: int
    ts: str
    type: str
    thread_id: str | None = None
    trace_id: str | None = None
    run_id: str | None = None
    agent: str | None = None
    user_id: str | None = None
    correlation_id: str | None = None
    step: int | None = None
    call_id: str | None = None
    tool: str | None = None
    status: str | None = None
    data: dict[str, object] = field(default_factory=dict[str, object])

    def as_dict(self) -> dict[str, object]:
        """Return the event as a JSON-ready dict."""
        return {name: getattr(self, name) for name in _COLUMNS}


def query_sql(
    *,
    thread_id: str | None,
    trace_id: str | None,
    types: Iterable[str] | None,
    limit: int | None,
) -> tuple[str, list[object]]:
    """Return the SELECT of :meth:`EventLog.query` (``?`` placeholders) and its parameters.

    One query for both logs: the PostgreSQL one translates the placeholders.
    """
    where: list[str] = []
    params: list[object] = []
    for column, value in (("thread_id", thread_id), ("trace_id", trace_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if types is not None:
        wanted = list(types)
        where.append(f"type IN ({', '.join('?' * len(wanted))})")
        params.extend(wanted)
    sql = f"SELECT {', '.join(_COLUMNS)} FROM {TABLE}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY seq"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return sql, params


class EventLog(Closeable):
    """Append events to, and query them from, the ``noema_events`` table of a SQLite file.

    Every append is its own committed transaction. The connection may be shared with a
    :class:`~langgraph.checkpoint.sqlite.SqliteSaver` (pass its lock) or owned
    (:meth:`open`, closed by :meth:`close` or ``with``).
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        lock: AbstractContextManager[object] | None = None,
        owned: bool = False,
    ) -> None:
        """Use ``conn`` (created with ``check_same_thread=False``); create the table."""
        self.conn = conn
        self.lock: AbstractContextManager[object] = lock if lock is not None else threading.Lock()
        self._owned = owned
        with self.lock:
            conn.executescript(_SCHEMA)
            conn.commit()

    @classmethod
    def open(cls, path: str | Path) -> Self:
        """Open ``path`` (WAL, busy timeout) with a connection this log owns."""
        return cls(connect(path), owned=True)

    @classmethod
    def for_saver(cls, saver: SqliteSaver) -> Self:
        """Share the connection and lock of a SqliteSaver: events live beside checkpoints."""
        return cls(saver.conn, lock=saver.lock)

    def close(self) -> None:
        """Close the connection if this log opened it."""
        if self._owned:
            self.conn.close()

    def append(
        self, type_: str, *, data: Mapping[str, object] | None = None, **columns: str | int | None
    ) -> int:
        """Append one event and commit it; return its sequence number.

        ``columns`` are the optional columns of :class:`LoggedEvent` (thread_id, trace_id,
        run_id, agent, user_id, correlation_id, step, call_id, tool, status).
        """
        unknown = set(columns) - set(_COLUMNS[3:-1])
        if unknown:
            raise ConfigurationError("columns", f"unknown event columns {sorted(unknown)!r}")
        names = ["ts", "type", *columns, "data"]
        values = [utc_now(), type_, *columns.values(), json.dumps(dict(data or {}), default=str)]
        sql = f"INSERT INTO {TABLE} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        with self.lock:
            cursor = self.conn.execute(sql, values)
            self.conn.commit()
        return int(cursor.lastrowid or 0)

    def query(
        self,
        *,
        thread_id: str | None = None,
        trace_id: str | None = None,
        types: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> list[LoggedEvent]:
        """Return events in the order they were written, filtered by thread, trace and type."""
        sql, params = query_sql(thread_id=thread_id, trace_id=trace_id, types=types, limit=limit)
        return [_event(row) for row in self._rows(sql, params)]

    def _rows(self, sql: str, params: list[object]) -> list[Sequence[Any]]:
        """Return the rows of a SELECT, values in column order (PostgreSQL overrides it)."""
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def in_flight(
        self, *, thread_id: str | None = None, trace_id: str | None = None
    ) -> list[LoggedEvent]:
        """Return ``tool.invoked`` events that no ``tool.completed`` answered (crashed calls)."""
        events = self.query(
            thread_id=thread_id, trace_id=trace_id, types=("tool.invoked", "tool.completed")
        )
        done = {(e.trace_id, e.call_id) for e in events if e.type == "tool.completed"}
        return [
            e for e in events if e.type == "tool.invoked" and (e.trace_id, e.call_id) not in done
        ]


def _event(row: Sequence[Any]) -> LoggedEvent:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["data"] = json.loads(values["data"] or "{}")
    return LoggedEvent(**values)


def read_events(
    path: str | Path, *, thread_id: str | None = None, trace_id: str | None = None
) -> list[LoggedEvent]:
    """Open ``path`` read-only-ish and return its events (an empty list without the table)."""
    conn = connect(path)
    try:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (TABLE,)
        ).fetchone()
        if not exists:
            return []
        return EventLog(conn).query(thread_id=thread_id, trace_id=trace_id)
    finally:
        conn.close()


def prune_events(
    conn: sqlite3.Connection,
    *,
    thread_id: str,
    keep_from_run: str | None,
    before: str | None = None,
) -> int:
    """Delete ``thread_id``'s events older than run ``keep_from_run``'s first; return how many.

    With ``before`` (an ISO 8601 UTC time, the oldest checkpoint kept), the kept runs' events
    written before it go too, except their ``agent.*`` rows (when each run started and ended).
    Runs in the caller's transaction (``prune`` deletes checkpoints in the same one): the
    append-only trigger is lifted for this delete only and restored before the commit. Nothing
    is deleted when the table is absent or the run has no event (its rows are then unknown).
    """
    if not _exists(conn) or keep_from_run is None:
        return 0
    first = conn.execute(
        f"SELECT MIN(seq) FROM {TABLE} WHERE thread_id=? AND run_id=?", (thread_id, keep_from_run)
    ).fetchone()[0]
    if first is None:
        return 0
    conn.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_delete")
    removed = conn.execute(
        f"DELETE FROM {TABLE} WHERE thread_id=? AND seq<?", (thread_id, first)
    ).rowcount
    if before is not None:
        removed += conn.execute(
            f"DELETE FROM {TABLE} WHERE thread_id=? AND ts<? AND type NOT LIKE 'agent.%'",
            (thread_id, before),
        ).rowcount
    conn.execute(_NO_DELETE)
    return removed


def drop_events(conn: sqlite3.Connection, *, thread_id: str) -> int:
    """Delete every event of ``thread_id`` (a pruned thread), in the caller's transaction."""
    if not _exists(conn):
        return 0
    conn.execute(f"DROP TRIGGER IF EXISTS {TABLE}_no_delete")
    removed = conn.execute(f"DELETE FROM {TABLE} WHERE thread_id=?", (thread_id,)).rowcount
    conn.execute(_NO_DELETE)
    return removed


def _exists(conn: sqlite3.Connection) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (TABLE,))
    return found.fetchone() is not None
