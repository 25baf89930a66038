"""Deprecated alias of :mod:`noema_graph.cli.db`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.cli_db moved to noema_graph.cli.db: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.db import *  # noqa: E402, F403
