"""Deprecated alias of :mod:`noema_graph.storage.backends`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.backends moved to noema_graph.storage.backends: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.backends import *  # noqa: E402, F403
