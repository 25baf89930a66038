"""Deprecated alias of :mod:`noema_graph.storage.ledger`; removed in the next release."""

import warnings

warnings.warn(
    "noema_graph.nodes.ledger moved to noema_graph.storage.ledger: import it from there",
    DeprecationWarning,
    stacklevel=2,
)

from noema_graph.storage.ledger import *  # noqa: E402, F403
