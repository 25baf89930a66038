"""Deprecated alias of :mod:`noema_graph.storage.sql.connections`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.noema.connections moved to "
    "noema_graph.storage.sql.connections: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sql.connections import *  # noqa: E402, F403
