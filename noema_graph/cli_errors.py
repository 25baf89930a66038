"""Deprecated alias of :mod:`noema_graph.cli.errors`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.cli_errors moved to noema_graph.cli.errors: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.errors import *  # noqa: E402, F403
