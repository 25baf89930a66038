"""Deprecated alias of :mod:`noema_graph.storage.postgres.doctor`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.doctor_pg moved to noema_graph.storage.postgres.doctor: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.postgres.doctor import *  # noqa: E402, F403
