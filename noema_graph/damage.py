"""Deprecated alias of :mod:`noema_graph.storage.sqlite.damage`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.damage moved to noema_graph.storage.sqlite.damage: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.sqlite.damage import *  # noqa: E402, F403
