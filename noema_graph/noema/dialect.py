"""Deprecated alias of :mod:`noema_graph.storage.sql.dialect`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.noema.dialect moved to noema_graph.storage.sql.dialect: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sql.dialect import *  # noqa: E402, F403
