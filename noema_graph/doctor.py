"""Deprecated alias of :mod:`noema_graph.storage.sqlite.doctor`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.doctor moved to noema_graph.storage.sqlite.doctor: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.doctor import *  # noqa: E402, F403
