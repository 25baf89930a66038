"""Stored-name alias of :mod:`noema_graph.storage.serde`, kept for good.

Checkpoint files written before the storage modules moved name
``noema_graph.compact_serde.expand_output`` in their stored values, and LangGraph's decoder
imports a stored name by module path: this module keeps those files readable. It does not
warn, because reading an old file imports it. New code imports :mod:`noema_graph.storage.serde`.
"""

from noema_graph.storage.serde import expand_output

__all__ = ["expand_output"]
