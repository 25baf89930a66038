"""Deprecated alias of :mod:`noema_graph.storage.sqlite.delta`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.sqlite_delta moved to noema_graph.storage.sqlite.delta: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.delta import *  # noqa: E402, F403
