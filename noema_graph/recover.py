"""Deprecated alias of :mod:`noema_graph.storage.sqlite.recover`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.recover moved to noema_graph.storage.sqlite.recover: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.recover import *  # noqa: E402, F403
