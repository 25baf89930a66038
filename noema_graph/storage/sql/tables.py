"""Ask a PostgreSQL database whether a table exists (read-only).

The learning store and the event log read a table only where it was created.
"""

from __future__ import annotations

from noema_graph.storage.sql.connections import connect_sync
from noema_graph.storage.sql.driver import Op, fetch_one, run_sync


def _table_exists(name: str) -> Op[bool]:
    row = yield from fetch_one("SELECT to_regclass(?) IS NOT NULL AS found", (name,))
    return row is not None and bool(row["found"])


def postgres_table_exists(url: str, name: str) -> bool:
    """Return whether the PostgreSQL database at ``url`` has table ``name`` (read-only).

    Raises:
        DatabaseUnavailable: the server could not be reached.
    """
    db = connect_sync(url, pooled=True)  # a server builds graphs, and asks, per request
    try:
        return run_sync(db, _table_exists(name), write=False)
    finally:
        db.close()
