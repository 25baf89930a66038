"""Deprecated alias of :mod:`noema_graph.storage.sqlite.retention`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.retention moved to noema_graph.storage.sqlite.retention: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.retention import *  # noqa: E402, F403
