"""Deprecated alias of :mod:`noema_graph.storage.sqlite.eventlog`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.observability.eventlog moved to "
    "noema_graph.storage.sqlite.eventlog: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.eventlog import *  # noqa: E402, F403
