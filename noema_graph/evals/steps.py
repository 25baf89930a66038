"""Deprecated alias of :mod:`noema_graph.trajectory.steps`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.evals.steps moved to noema_graph.trajectory.steps: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.trajectory.steps import *  # noqa: E402, F403
