"""Deprecated alias of :mod:`noema_graph.storage.postgres.inspect`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.pg_inspect moved to noema_graph.storage.postgres.inspect: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.postgres.inspect import *  # noqa: E402, F403
