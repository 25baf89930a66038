"""Deprecated alias of :mod:`noema_graph.storage.postgres.eventlog`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.observability.pg_eventlog moved to "
    "noema_graph.storage.postgres.eventlog: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.postgres.eventlog import *  # noqa: E402, F403
