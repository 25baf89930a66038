"""Deprecated alias of :mod:`noema_graph.cli.cancel`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.cli_cancel moved to noema_graph.cli.cancel: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.cancel import *  # noqa: E402, F403
