"""Deprecated alias of :mod:`noema_graph.storage.sqlite.liveness`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.liveness moved to noema_graph.storage.sqlite.liveness: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.liveness import *  # noqa: E402, F403
