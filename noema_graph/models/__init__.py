"""Chat models for every graph: the factory, the embedded local model, costs and context.

Import from the submodules (``noema_graph.models.factory`` etc.); this package re-exports the
public names for convenience. Nothing here starts a server or opens a connection at import.
"""

from noema_graph.models.context import CompactionResult, compact_messages, count_tokens
from noema_graph.models.factory import ModelSpec, make_model, parse_model_spec
from noema_graph.models.grammar import bind_react_grammar, react_grammar
from noema_graph.models.local import LocalModelServer, shared_local_server
from noema_graph.models.pricing import estimate_cost_usd
from noema_graph.models.profile import ModelProfile, model_profile
from noema_graph.models.structured import structured

__all__ = [
    "CompactionResult",
    "LocalModelServer",
    "ModelProfile",
    "ModelSpec",
    "bind_react_grammar",
    "compact_messages",
    "count_tokens",
    "estimate_cost_usd",
    "make_model",
    "model_profile",
    "parse_model_spec",
    "react_grammar",
    "shared_local_server",
    "structured",
]
