"""Deprecated alias of :mod:`noema_graph.cli.runs`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.cli_runs moved to noema_graph.cli.runs: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.runs import *  # noqa: E402, F403
