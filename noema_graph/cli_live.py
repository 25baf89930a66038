"""Deprecated alias of :mod:`noema_graph.cli.live`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.cli_live moved to noema_graph.cli.live: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.live import *  # noqa: E402, F403
