"""Deprecated alias of :mod:`noema_graph.storage.side_tables`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.side_tables moved to noema_graph.storage.side_tables: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.side_tables import *  # noqa: E402, F403
