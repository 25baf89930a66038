"""Retention on PostgreSQL: :func:`prune_postgres` removes the threads that keep no checkpoint.

The limits mean what they mean on SQLite (:mod:`noema_graph.storage.sqlite.retention`, whose
:func:`plan`
decides): a checkpoint goes when it is not among its thread's newest ``keep_last`` or was
written before ``older_than`` ago. A thread none of whose checkpoints stays is removed whole,
in one transaction: its checkpoints, blobs and writes, its tool-ledger entries in the Store
and its event-log rows.

Older checkpoints of a thread that keeps some are kept too, and counted in the result: a
kept checkpoint is resumed by replaying the message and trace writes of the checkpoints
before it, so removing those needs a snapshot of the delta channels in the oldest kept one.
On SQLite :mod:`noema_graph.storage.sqlite.retention` writes it into the checkpoint's row;
PostgreSQL
stores channel values in blobs shared by version with the newer checkpoints, and LangGraph's
own ``PostgresSaver.prune`` refuses threads with delta channels for the same reason. So on
PostgreSQL, ``older_than`` is the limit that frees space; ``keep_last`` only removes threads
when combined with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, LiteralString

from noema_graph.storage.postgres.inspect import connect
from noema_graph.storage.sqlite.eventlog import TABLE as EVENTS_TABLE
from noema_graph.storage.sqlite.retention import LEDGER_PREFIX, check_limits, cutoff_of, plan

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import DictRow

ROWS_SQL = "SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints"
DROP_SQL: tuple[LiteralString, ...] = (
    "DELETE FROM checkpoints WHERE thread_id = ANY(%(threads)s)",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY(%(threads)s)",
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY(%(threads)s)",
)
LEDGER_SQL = "DELETE FROM store WHERE prefix = ANY(%(prefixes)s)"
# the event log is append-only (a trigger): only a prune lifts that, inside its transaction
EVENTS_OFF: LiteralString = f"ALTER TABLE {EVENTS_TABLE} DISABLE TRIGGER {EVENTS_TABLE}_append_only"
EVENTS_SQL: LiteralString = f"DELETE FROM {EVENTS_TABLE} WHERE thread_id = ANY(%(threads)s)"
EVENTS_ON: LiteralString = f"ALTER TABLE {EVENTS_TABLE} ENABLE TRIGGER {EVENTS_TABLE}_append_only"
TABLE_SQL = "SELECT to_regclass(%s) IS NOT NULL AS found"


@dataclass(frozen=True, slots=True)
class Pruned:
    """What :func:`prune_postgres` removed, and what it kept that the limits would remove."""

    removed_checkpoints: int
    dropped_threads: list[str]
    kept_checkpoints: int
    """Checkpoints past the limits in threads that keep newer ones (see the module doc)."""
    kept_threads: int


def prune_postgres(
    url: str,
    *,
    keep_last: int | None = None,
    older_than: timedelta | float | None = None,
    now: datetime | None = None,
) -> Pruned:
    """Remove the threads of ``url`` that keep no checkpoint under the limits; say what stays.

    Raises:
        ConfigurationError: neither limit given, ``keep_last`` < 1 or ``older_than`` < 0.
        DatabaseUnavailable: the server cannot be reached.
    """
    check_limits(keep_last, older_than)
    cutoff = cutoff_of(older_than, now)
    with connect(url) as conn, conn.transaction():
        conn.execute("LOCK TABLE checkpoints IN SHARE ROW EXCLUSIVE MODE")  # runs wait
        rows = [tuple(row.values()) for row in conn.execute(ROWS_SQL).fetchall()]
        decided = plan(rows, keep_last=keep_last, cutoff=cutoff)
        if decided.dropped_threads:
            _drop(conn, decided.dropped_threads)
    return Pruned(
        removed_checkpoints=decided.dropped_checkpoints,
        dropped_threads=decided.dropped_threads,
        kept_checkpoints=len(decided.doomed),
        kept_threads=len({key[0] for key in decided.doomed}),
    )


def _drop(conn: Connection[DictRow], threads: list[str]) -> None:
    """Delete every row of ``threads`` in the caller's transaction."""
    params: dict[str, object] = {
        "threads": threads,
        "prefixes": [f"{LEDGER_PREFIX}.{thread}" for thread in threads],
    }
    for sql in DROP_SQL:
        conn.execute(sql, params)
    if _exists(conn, "store"):
        conn.execute(LEDGER_SQL, params)
    if _exists(conn, EVENTS_TABLE):
        conn.execute(EVENTS_OFF)
        conn.execute(EVENTS_SQL, params)
        conn.execute(EVENTS_ON)


def _exists(conn: Connection[DictRow], table: str) -> bool:
    row = conn.execute(TABLE_SQL, (table,)).fetchone()
    return bool(row and row["found"])
