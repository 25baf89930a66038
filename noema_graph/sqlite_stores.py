"""Deprecated alias of :mod:`noema_graph.storage.sqlite.stores`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.sqlite_stores moved to noema_graph.storage.sqlite.stores: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.stores import *  # noqa: E402, F403
