"""Deprecated alias of :mod:`noema_graph.trajectory.schema`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.evals.trajectory moved to noema_graph.trajectory.schema: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.trajectory.schema import *  # noqa: E402, F403
