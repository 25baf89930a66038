"""Deprecated alias of :mod:`noema_graph.claims`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.evals.claims moved to noema_graph.claims: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.claims import *  # noqa: E402, F403
