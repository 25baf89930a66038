"""Deprecated alias of :mod:`noema_graph.storage.sqlite.writer`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.sqlite_writer moved to noema_graph.storage.sqlite.writer: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.writer import *  # noqa: E402, F403
