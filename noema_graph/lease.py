"""Deprecated alias of :mod:`noema_graph.storage.lease`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.lease moved to noema_graph.storage.lease: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.lease import *  # noqa: E402, F403
