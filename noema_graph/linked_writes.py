"""Deprecated alias of :mod:`noema_graph.storage.sqlite.linked_writes` (removed next release)."""

import warnings

warnings.warn(
    "noema_graph.linked_writes moved to "
    "noema_graph.storage.sqlite.linked_writes: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.linked_writes import *  # noqa: E402, F403
