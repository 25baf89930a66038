"""Deprecated alias of :mod:`noema_graph.schemas`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.tools.schemas moved to noema_graph.schemas: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.schemas import *  # noqa: E402, F403
