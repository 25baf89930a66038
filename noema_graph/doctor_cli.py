"""Deprecated alias of :mod:`noema_graph.cli.doctor`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.doctor_cli moved to noema_graph.cli.doctor: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.cli.doctor import *  # noqa: E402, F403
