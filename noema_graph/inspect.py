"""Inspect runs in a checkpoint database: the documented public inspection API.

The logic lives in :mod:`noema_graph.storage.inspect` (it works on any saver); this module
is its public path, as the README and notebooks use it.
"""

from __future__ import annotations

from noema_graph.storage.inspect import (
    HISTORY_SQL,
    INTERRUPT,
    PAUSED_IN_THREAD_SQL,
    PAUSED_SQL,
    RECIPE_KEY,
    SUMMARY_KEY,
    THREADS_SQL,
    CheckpointRow,
    Rows,
    Source,
    Status,
    ThreadRow,
    acheckpoint,
    ahistory,
    athreads,
    checkpoint,
    fork,
    history,
    replay_from,
    run_summary,
    threads,
)

__all__ = [
    "HISTORY_SQL",
    "INTERRUPT",
    "PAUSED_IN_THREAD_SQL",
    "PAUSED_SQL",
    "RECIPE_KEY",
    "SUMMARY_KEY",
    "THREADS_SQL",
    "CheckpointRow",
    "Rows",
    "Source",
    "Status",
    "ThreadRow",
    "acheckpoint",
    "ahistory",
    "athreads",
    "checkpoint",
    "fork",
    "history",
    "replay_from",
    "run_summary",
    "threads",
]
