"""Deprecated alias of :mod:`noema_graph.cli.model`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.cli_model moved to noema_graph.cli.model: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.model import *  # noqa: E402, F403
