"""Deprecated alias of :mod:`noema_graph.storage.postgres.savers`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.pg_savers moved to noema_graph.storage.postgres.savers: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.postgres.savers import *  # noqa: E402, F403
