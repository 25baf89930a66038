"""Read the checkpoint tables of a PostgreSQL database for :mod:`noema_graph.storage.inspect`.

:func:`open_reader` opens one connection and a ``PostgresSaver`` on it (decoding with the
allow-list of :func:`noema_graph.storage.sqlite.persistence.serializer`); it creates and migrates
nothing, so
listing a database never writes to it. The queries read only the ``checkpoints`` table's
metadata (JSON) and the interrupts in ``checkpoint_writes``: a checkpoint whose metadata
holds the run summary is listed without decoding a blob, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, LiteralString, cast

from noema_graph.errors import ConfigurationError
from noema_graph.storage.urls import (
    CONNECT_TIMEOUT_S,
    DATABASE_URL_ENV,
    connection_options,
    missing_driver_error,
    redacted,
    unavailable_error,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import DictRow

HEADS_SQL = """
SELECT c.thread_id, c.checkpoint_id, c.metadata, f.first_id, EXISTS (
    SELECT 1 FROM checkpoint_writes AS w WHERE w.thread_id = c.thread_id
    AND w.checkpoint_ns = '' AND w.checkpoint_id = c.checkpoint_id AND w.channel = %s
) AS paused
FROM (
    SELECT thread_id, MAX(checkpoint_id) AS last_id, MIN(checkpoint_id) AS first_id
    FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id
) AS f
JOIN checkpoints AS c
    ON c.thread_id = f.thread_id AND c.checkpoint_ns = '' AND c.checkpoint_id = f.last_id
"""
"""Each thread's newest root checkpoint, through the primary keys (and whether a write on
the interrupt channel waits at it)."""
HISTORY_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id, metadata, checkpoint->>'ts' AS ts "
    "FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id"
)
PAUSED_SQL = (
    "SELECT DISTINCT thread_id, checkpoint_id FROM checkpoint_writes "
    "WHERE thread_id = %s AND checkpoint_ns = '' AND channel = %s"
)


@dataclass(frozen=True, slots=True)
class Head:
    """A thread's newest root checkpoint: its id, metadata, the thread's first id, a pause."""

    thread_id: str
    checkpoint_id: str
    metadata: Mapping[str, object]
    first_id: str
    paused: bool


@dataclass(frozen=True, slots=True)
class Saved:
    """One root checkpoint of a thread, as its table row holds it (no blob decoded)."""

    checkpoint_id: str
    parent_id: str | None
    metadata: Mapping[str, object]
    ts: str


@dataclass(frozen=True, slots=True)
class PostgresReader:
    """One connection to a checkpoint database and a saver on it (read-only use)."""

    url: str
    conn: Connection[DictRow]
    saver: PostgresSaver

    def heads(self, interrupt: str) -> list[Head]:
        """Return every thread's newest root checkpoint (paused: a write on ``interrupt``)."""
        rows = self._rows(HEADS_SQL, (interrupt,))
        return [
            Head(
                str(row["thread_id"]),
                str(row["checkpoint_id"]),
                row["metadata"] or {},
                str(row["first_id"]),
                bool(row["paused"]),
            )
            for row in rows
        ]

    def history(self, thread_id: str) -> list[Saved]:
        """Return ``thread_id``'s root checkpoints, oldest first."""
        rows = self._rows(HISTORY_SQL, (thread_id,))
        return [
            Saved(
                str(row["checkpoint_id"]),
                row["parent_checkpoint_id"],
                row["metadata"] or {},
                str(row["ts"] or ""),
            )
            for row in rows
        ]

    def paused(self, thread_id: str, interrupt: str) -> set[str]:
        """Return the checkpoints of ``thread_id`` with a pending write on ``interrupt``."""
        rows = self._rows(PAUSED_SQL, (thread_id, interrupt))
        return {str(row["checkpoint_id"]) for row in rows}

    def _rows(self, sql: LiteralString, params: tuple[object, ...]) -> list[DictRow]:
        return self.conn.execute(sql, params).fetchall()


def no_tables_error(url: str) -> ConfigurationError:
    """Return the error for a PostgreSQL database without LangGraph's checkpoint tables."""
    return ConfigurationError(
        "database url",
        f"{redacted(url)!r} has no checkpoint tables (no run has used it)",
        fix=f"pass the database your runs used (--database-url or {DATABASE_URL_ENV}), "
        "or create the tables with noema-graph db upgrade",
    )


def connect(url: str) -> Connection[DictRow]:
    """Open an autocommit connection to ``url`` as LangGraph's savers expect it.

    Raises:
        ConfigurationError: psycopg is not installed.
        DatabaseUnavailable: the server did not accept the connection (the URL is named,
            its password masked).
    """
    try:
        from psycopg import Connection, OperationalError
    except ImportError as exc:
        raise missing_driver_error(exc) from exc
    options: dict[str, Any] = {**connection_options(), "connect_timeout": CONNECT_TIMEOUT_S}
    try:
        opened = cast("Connection[DictRow]", Connection.connect(url, **options))
    except OperationalError as exc:
        raise unavailable_error(url, exc) from exc
    return opened


@contextmanager
def open_reader(url: str) -> Generator[PostgresReader]:
    """Open a :class:`PostgresReader` on ``url``; close its connection at the end.

    Raises:
        ConfigurationError: PostgreSQL support is not installed, or the database has no
            checkpoint tables (a read inside the block found none).
        DatabaseUnavailable: the server cannot be reached.
    """
    try:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.errors import UndefinedTable
    except ImportError as exc:
        raise missing_driver_error(exc) from exc
    from noema_graph.storage.serde import serializer

    with connect(url) as conn:
        try:
            yield PostgresReader(url, conn, PostgresSaver(conn, serde=serializer()))
        except UndefinedTable as exc:
            raise no_tables_error(url) from exc
