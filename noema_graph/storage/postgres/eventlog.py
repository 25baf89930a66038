"""The event log in PostgreSQL: the ``noema_events`` table beside a run's checkpoints.

:class:`PostgresEventLog` is an :class:`~noema_graph.storage.sqlite.eventlog.EventLog` (the
observer and the probes use it unchanged) whose rows live in the PostgreSQL database of a
``postgresql://`` URL. It goes through the learning store's dialect layer
(:mod:`noema_graph.storage.sql.dialect`, :mod:`noema_graph.storage.sql.connections`): the same
column
list and SQL, ``?`` placeholders, pooled psycopg connections. Each append is one
autocommitted ``INSERT ... RETURNING seq``, so several processes (servers) append to one
log at once; ``seq`` is an identity column, unique and increasing in commit order per
process. The table is created once per process and URL, under an advisory lock, and a
trigger refuses UPDATE and DELETE (append-only, as on SQLite).

:func:`read_events_at` reads a log from a SQLite path or a PostgreSQL URL; and
:func:`event_log_for` returns the log of a checkpointer opened by
:func:`noema_graph.storage.backends.open_backend` on PostgreSQL.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Self

from noema_graph.errors import ConfigurationError
from noema_graph.state.models import utc_now
from noema_graph.storage.sql.connections import connect_sync
from noema_graph.storage.sql.dialect import dialect_of, postgres_ddl
from noema_graph.storage.sql.driver import Op, Outcome, Statement, SyncConnection, execute, run_sync
from noema_graph.storage.sql.tables import postgres_table_exists
from noema_graph.storage.sqlite.eventlog import (
    _COLUMNS,  # pyright: ignore[reportPrivateUsage] -- one column list for both logs
    TABLE,
    EventLog,
    LoggedEvent,
    read_events,
)
from noema_graph.storage.urls import EVENT_LOG_URL, sqlite_path

SETUP_LOCK = 0x6E6F656D6145  # pg_advisory_xact_lock key of the event log's table creation

_TYPES = {
    "seq": "INTEGER PRIMARY KEY",
    "ts": "TEXT NOT NULL",
    "type": "TEXT NOT NULL",
    "step": "INTEGER",
    "data": "TEXT NOT NULL DEFAULT '{}'",
}  # every other column is TEXT
_TABLE = postgres_ddl(
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    + ", ".join(f"{name} {_TYPES.get(name, 'TEXT')}" for name in _COLUMNS)
    + ")"
)
SCHEMA: tuple[str, ...] = (
    _TABLE,
    f"CREATE INDEX IF NOT EXISTS {TABLE}_thread ON {TABLE}(thread_id, seq)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_trace ON {TABLE}(trace_id, seq)",
    f"""CREATE OR REPLACE FUNCTION {TABLE}_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION '{TABLE} is append-only'; END $$""",
    f"""CREATE OR REPLACE TRIGGER {TABLE}_append_only BEFORE UPDATE OR DELETE ON {TABLE}
    FOR EACH ROW EXECUTE FUNCTION {TABLE}_append_only()""",
)
"""The table, its indexes and the append-only trigger (PostgreSQL 14 or newer)."""

_ready: set[str] = set()
_ready_lock = threading.Lock()


def _statement(url: str, stmt: Statement) -> Outcome:
    """Run one autocommitted statement on a pooled connection to ``url``."""
    db: SyncConnection = connect_sync(url, pooled=True)
    try:
        return db.run_statement(stmt)
    finally:
        db.close()


def _create() -> Op[None]:
    yield from execute(f"SELECT pg_advisory_xact_lock({SETUP_LOCK})")
    for sql in SCHEMA:
        yield from execute(sql)


def ensure_table(url: str) -> None:
    """Create the event log's table at ``url`` once per process (under an advisory lock).

    Raises:
        DatabaseUnavailable: the server could not be reached.
    """
    with _ready_lock:
        if url in _ready:
            return
        db = connect_sync(url, pooled=True)
        try:
            run_sync(db, _create(), write=False)  # its own lock, not the learning store's
        finally:
            db.close()
        _ready.add(url)


class PostgresEventLog(EventLog):
    """The event log in the PostgreSQL database at ``url`` (see the module docstring)."""

    def __init__(self, url: str, *, create: bool = True) -> None:
        """Use the database at ``url``, creating the table unless ``create`` is False.

        Raises:
            DatabaseUnavailable: the server could not be reached.
        """
        self.url = url
        # EventLog's attribute; every call is independent
        self.lock: AbstractContextManager[object] = threading.Lock()
        if create:
            ensure_table(url)

    @classmethod
    def open(cls, path: str | Path) -> Self:
        """Open the log of the database at URL ``path``."""
        return cls(str(path))

    def close(self) -> None:
        """Nothing to close: every call borrows a pooled connection and gives it back."""

    def append(
        self, type_: str, *, data: Mapping[str, object] | None = None, **columns: str | int | None
    ) -> int:
        """Append one event (committed on return); return its sequence number."""
        unknown = set(columns) - set(_COLUMNS[3:-1])
        if unknown:
            raise ConfigurationError("columns", f"unknown event columns {sorted(unknown)!r}")
        names = ["ts", "type", *columns, "data"]
        values = [utc_now(), type_, *columns.values(), json.dumps(dict(data or {}), default=str)]
        sql = (
            f"INSERT INTO {TABLE} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
            " RETURNING seq"
        )
        outcome = _statement(self.url, Statement(sql, values))
        return int(outcome.rows[0]["seq"])

    def _rows(self, sql: str, params: list[object]) -> list[Sequence[object]]:
        """Return the rows of :meth:`EventLog.query`'s SELECT, read on PostgreSQL."""
        outcome = _statement(self.url, Statement(sql, params))
        return [tuple(row[name] for name in _COLUMNS) for row in outcome.rows]


def read_events_at(
    location: str | Path, *, thread_id: str | None = None, trace_id: str | None = None
) -> list[LoggedEvent]:
    """Return the events of the log at a SQLite path or a PostgreSQL URL (none without one).

    Read-only on PostgreSQL: a database without the table gives an empty list.

    Raises:
        DatabaseUnavailable: the PostgreSQL server could not be reached.
    """
    if dialect_of(location) == "sqlite":
        return read_events(sqlite_path(location), thread_id=thread_id, trace_id=trace_id)
    url = str(location)
    if not postgres_table_exists(url, TABLE):
        return []
    log = PostgresEventLog(url, create=False)
    return log.query(thread_id=thread_id, trace_id=trace_id)


def event_log_for(checkpointer: object) -> PostgresEventLog | None:
    """Return the event log beside a PostgreSQL checkpointer from ``open_backend``, else None."""
    url = getattr(checkpointer, EVENT_LOG_URL, None)
    return PostgresEventLog(url) if isinstance(url, str) else None
