"""Deprecated alias of :mod:`noema_graph.claims.check`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.evals.runtime moved to noema_graph.claims.check: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.claims.check import *  # noqa: E402, F403
