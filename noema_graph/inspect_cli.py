"""Deprecated alias of :mod:`noema_graph.cli.inspect`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.inspect_cli moved to noema_graph.cli.inspect: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.inspect import *  # noqa: E402, F403
