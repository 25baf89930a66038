"""Helpers of the change-journal tests and benches: the learner's data, as a query sees it."""

from __future__ import annotations

from typing import Any

from noema_graph.noema.journal import ChangeContext
from noema_graph.noema.journal_schema import JOURNALED
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import fetch_all

Snapshot = dict[str, list[tuple[Any, ...]]]


def snapshot(store: LearningStore) -> Snapshot:
    """Return every learner-data table (the journal aside) as sorted rows of its columns."""
    found: Snapshot = {}
    for table, spec in JOURNALED.items():
        sql = f"SELECT {', '.join(spec.columns)} FROM {table} ORDER BY {', '.join(spec.key)}"
        if store.dialect == "sqlite":  # the driver's rows as they are: fast enough to fuzz
            found[table] = [tuple(row) for row in store.connection.execute(sql)]
        else:
            rows = store.run(fetch_all(sql), write=False)
            found[table] = [tuple(dict(row)[c] for c in spec.columns) for row in rows]
    return found


def as_call(thread: str, call: str, tool: str, step: int = 1, **kw: Any) -> ChangeContext:
    """Return the change context of a tool call ``call`` of ``thread``."""
    return ChangeContext(thread_id=thread, call_id=call, tool=tool, step=step, **kw)
