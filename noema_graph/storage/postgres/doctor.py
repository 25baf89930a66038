"""Check a PostgreSQL run database: its tables, their schema versions, and every row.

:func:`diagnose_postgres` is ``noema-graph doctor --database-url``'s check. It only reads:

1. the tables: LangGraph's checkpoint tables (``checkpoints``, ``checkpoint_blobs``,
   ``checkpoint_writes``) must be there; the Store's and noema's event log are noted when
   missing (``noema-graph db upgrade`` creates them);
2. the schema versions LangGraph's savers recorded (``checkpoint_migrations``,
   ``store_migrations``) against the ones this installation knows;
3. orphan rows: writes of a checkpoint that is gone (damage, as on SQLite) and blobs no
   checkpoint refers to (a note: unused space, not a fault);
4. every checkpoint, write and blob decodes with noema's allow-list, and each thread's
   newest checkpoint loads as ``get_state`` would load it.

What it cannot do is said in the report: PostgreSQL keeps its own pages consistent (check
them with ``pg_amcheck``), and ``--repair`` is for SQLite files (on PostgreSQL, restore a
backup: ``pg_dump``/``pg_restore``). The Store's values are JSONB, so PostgreSQL has already
checked that they are JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, LiteralString

from noema_graph.storage.postgres.inspect import connect
from noema_graph.storage.serde import serializer
from noema_graph.storage.sqlite.damage import DECODE_ERRORS, BadRow
from noema_graph.storage.sqlite.doctor import SHOWN, Report
from noema_graph.storage.sqlite.eventlog import TABLE as EVENTS_TABLE
from noema_graph.storage.urls import redacted

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.serde.base import SerializerProtocol
    from psycopg import Connection
    from psycopg.rows import DictRow

CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
TABLES_SQL = (
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
)
ORPHAN_WRITES_SQL = """
SELECT w.thread_id, COUNT(*) AS n FROM checkpoint_writes AS w
WHERE NOT EXISTS (SELECT 1 FROM checkpoints AS c WHERE c.thread_id = w.thread_id
    AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)
GROUP BY w.thread_id ORDER BY w.thread_id
"""
ORPHAN_BLOBS_SQL = """
SELECT COUNT(*) AS n FROM checkpoint_blobs AS b
WHERE NOT EXISTS (
    SELECT 1 FROM checkpoints AS c, jsonb_each_text(c.checkpoint->'channel_versions') AS v
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
    AND v.key = b.channel AND v.value = b.version)
"""
HEADS_SQL = (
    "SELECT DISTINCT ON (thread_id, checkpoint_ns) thread_id, checkpoint_ns, checkpoint_id "
    "FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC"
)
BLOB_ROWS_SQL = (
    "SELECT thread_id, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs"
)
WRITE_ROWS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, type, blob "
    "FROM checkpoint_writes"
)
CANNOT = (
    "not checked here: PostgreSQL's own pages and indexes (run pg_amcheck on the database)",
    "--repair works on SQLite files only: on PostgreSQL restore a backup (pg_dump/pg_restore)",
)


def diagnose_postgres(url: str) -> Report:
    """Check the run database at ``url`` without changing it; return the report.

    Raises:
        ConfigurationError: PostgreSQL support is not installed.
        DatabaseUnavailable: the server cannot be reached.
    """
    report = Report(redacted(url))
    with connect(url) as conn:
        tables = {str(row["table_name"]) for row in conn.execute(TABLES_SQL).fetchall()}
        missing = [name for name in CHECKPOINT_TABLES if name not in tables]
        if missing:
            _not_checkpoints(missing, report)
        else:
            _versions(conn, tables, report)
            _counts(conn, report)
            _orphans(conn, report)
            _rows(conn, serializer(), report)
            _heads(conn, report)
            _others(tables, report)
    for text in CANNOT:
        report.note(text)
    return report


def _not_checkpoints(missing: list[str], report: Report) -> None:
    report.is_checkpoint_file = False
    report.damage(
        f"no checkpoint tables ({', '.join(missing)} missing): no run has used this database; "
        "pass the database your runs used, or create the tables with noema-graph db upgrade"
    )


VERSION_SQL: dict[str, LiteralString] = {
    "checkpoint_migrations": "SELECT MAX(v) AS v FROM checkpoint_migrations",
    "store_migrations": "SELECT MAX(v) AS v FROM store_migrations",
}
COUNT_SQL: dict[str, LiteralString] = {
    "checkpoints": "SELECT COUNT(*) AS n FROM checkpoints",
    "writes": "SELECT COUNT(*) AS n FROM checkpoint_writes",
}


def _version(conn: Connection[DictRow], table: str) -> int | None:
    row = conn.execute(VERSION_SQL[table]).fetchone()
    return None if row is None or row["v"] is None else int(row["v"])


def _versions(conn: Connection[DictRow], tables: set[str], report: Report) -> None:
    """Compare the recorded migration versions with the ones this installation knows."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    known = {
        "checkpoint_migrations": len(PostgresSaver.MIGRATIONS) - 1,
        "store_migrations": len(PostgresStore.MIGRATIONS) - 1,
    }
    for table, latest in known.items():
        found = _version(conn, table) if table in tables else None
        if found == latest:
            report.note(f"{table}: schema {found}, this installation's")
        elif found is None:
            report.note(f"{table} is missing: run noema-graph db upgrade (schema {latest})")
        elif found < latest:
            report.note(
                f"{table}: schema {found}, this installation's is {latest}; the next run or "
                "noema-graph db upgrade migrates it"
            )
        elif found > latest:
            report.note(
                f"{table}: schema {found} is newer than this installation's {latest} "
                "(written by a newer langgraph-checkpoint-postgres): upgrade noema-graph"
            )


def _counts(conn: Connection[DictRow], report: Report) -> None:
    for name, sql in COUNT_SQL.items():
        row = conn.execute(sql).fetchone()
        report.counts[name] = 0 if row is None else int(row["n"])


def _orphans(conn: Connection[DictRow], report: Report) -> None:
    for row in conn.execute(ORPHAN_WRITES_SQL).fetchall():
        report.damage(
            f"thread {row['thread_id']!r}: {row['n']} writes belong to no checkpoint in the "
            "database"
        )
    blobs = conn.execute(ORPHAN_BLOBS_SQL).fetchone()
    if blobs is not None and int(blobs["n"]):
        report.note(
            f"{blobs['n']} checkpoint blobs belong to no checkpoint (left by deleted "
            "checkpoints: space, not damage)"
        )


def _bad(
    serde: SerializerProtocol, rows: Iterable[DictRow], table: str, key: tuple[str, ...]
) -> list[BadRow]:
    """Return the rows of ``table`` whose value does not decode with ``serde``."""
    bad: list[BadRow] = []
    for row in rows:
        kind, blob = row["type"], row["blob"]
        if kind is None or kind == "empty":
            continue
        try:
            serde.loads_typed((str(kind), bytes(blob or b"")))
        except DECODE_ERRORS as exc:
            bad.append(
                BadRow(
                    table,
                    tuple(row[name] for name in key),
                    str(row["thread_id"]),
                    str(row.get("checkpoint_id") or row.get("version") or ""),
                    f"its value cannot be decoded ({type(exc).__name__}: {exc})",
                )
            )
    return bad


def _rows(conn: Connection[DictRow], serde: SerializerProtocol, report: Report) -> None:
    """Decode every blob and write with the allow-list; list the rows that fail."""
    blob_key = ("thread_id", "checkpoint_ns", "channel", "version")
    write_key = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx")
    report.bad += _bad(serde, conn.execute(BLOB_ROWS_SQL), "checkpoint_blobs", blob_key)
    report.bad += _bad(serde, conn.execute(WRITE_ROWS_SQL), "checkpoint_writes", write_key)
    for row in report.bad[:SHOWN]:
        report.damage(f"{row.table} row of thread {row.thread_id!r} {row.key!r}: {row.reason}")
    if len(report.bad) > SHOWN:
        report.damage(f"... and {len(report.bad) - SHOWN} more rows that cannot be read back")


def _heads(conn: Connection[DictRow], report: Report) -> None:
    """Load each thread's newest checkpoint as ``get_state`` does."""
    from langgraph.checkpoint.postgres import PostgresSaver

    saver = PostgresSaver(conn, serde=serializer())
    heads = conn.execute(HEADS_SQL).fetchall()
    report.counts["threads"] = len({row["thread_id"] for row in heads})
    for row in heads:
        config: RunnableConfig = {"configurable": {**row}}
        try:
            saver.get_tuple(config)
        except DECODE_ERRORS as exc:
            report.damage(
                f"thread {row['thread_id']!r}: its newest checkpoint {row['checkpoint_id']!r} "
                f"cannot be loaded ({type(exc).__name__}: {exc}), so get_state and resume fail"
            )


def _others(tables: set[str], report: Report) -> None:
    if "store" not in tables:
        report.note("the Store's table is missing (memory, tool ledger): noema-graph db upgrade")
    if EVENTS_TABLE not in tables:
        report.note(f"the event log ({EVENTS_TABLE}) is missing: noema-graph db upgrade")
