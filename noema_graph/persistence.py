"""Open checkpointers and stores: the public path of :mod:`noema_graph.storage.sqlite.persistence`.

``sqlite_checkpointer``, ``async_sqlite_checkpointer``, ``sqlite_store``, ``prune`` and the
allow-listed ``serializer`` (:mod:`noema_graph.storage.serde`), as the manual uses them.
"""

from __future__ import annotations

from noema_graph.storage.serde import MESSAGE_TYPES, allowed_types, serializer
from noema_graph.storage.sqlite.persistence import (
    BUSY_TIMEOUT_MS,
    DELTA_CHANNELS,
    PRAGMAS,
    CheckpointerArg,
    async_sqlite_checkpointer,
    async_sqlite_store,
    connect,
    make_compact,
    open_checkpointer,
    prune,
    quick_check,
    sqlite_checkpointer,
    sqlite_store,
)

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DELTA_CHANNELS",
    "MESSAGE_TYPES",
    "PRAGMAS",
    "CheckpointerArg",
    "allowed_types",
    "async_sqlite_checkpointer",
    "async_sqlite_store",
    "connect",
    "make_compact",
    "open_checkpointer",
    "prune",
    "quick_check",
    "serializer",
    "sqlite_checkpointer",
    "sqlite_store",
]
