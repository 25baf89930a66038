"""Deprecated alias of :mod:`noema_graph.storage.sql.driver`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.noema.driver moved to noema_graph.storage.sql.driver: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sql.driver import *  # noqa: E402, F403
