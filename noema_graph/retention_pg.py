"""Deprecated alias of :mod:`noema_graph.storage.postgres.retention` (removed next release)."""

import warnings

warnings.warn(
    "noema_graph.retention_pg moved to "
    "noema_graph.storage.postgres.retention: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.postgres.retention import *  # noqa: E402, F403
