"""Inspect runs in a checkpoint database: the documented public inspection API.

The logic lives in :mod:`noema_graph.storage.inspect` (it works on any saver); this module
is its public path, as the manual and notebooks use it: every name of that module's
``__all__``, and the SQL and constants the CLI and the PostgreSQL reader share.
"""

from __future__ import annotations

from noema_graph.storage import inspect as _inspect
from noema_graph.storage.inspect import *  # noqa: F403 -- the API is storage.inspect.__all__
from noema_graph.storage.inspect import (
    HISTORY_SQL,
    INTERRUPT,
    PAUSED_IN_THREAD_SQL,
    PAUSED_SQL,
    RECIPE_KEY,
    SUMMARY_KEY,
    THREADS_SQL,
    Rows,
    Source,
    Status,
)

__all__ = [
    "HISTORY_SQL",
    "INTERRUPT",
    "PAUSED_IN_THREAD_SQL",
    "PAUSED_SQL",
    "RECIPE_KEY",
    "SUMMARY_KEY",
    "THREADS_SQL",
    "Rows",
    "Source",
    "Status",
]
__all__ += _inspect.__all__
