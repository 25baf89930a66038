"""Stored-name alias of :mod:`noema_graph.storage.serde`: the path stored checkpoints name.

Checkpoint files may name ``noema_graph.compact_serde.expand_output`` in their stored values,
and LangGraph's decoder imports a stored name by module path: this module keeps those files
readable (:data:`noema_graph.storage.serde.STORED_ALIASES`). It does not warn, because reading
such a file imports it. Code imports :mod:`noema_graph.storage.serde`.
"""

from noema_graph.storage.serde import expand_output

__all__ = ["expand_output"]
