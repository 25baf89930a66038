"""Chat models for every graph: the factory, the embedded local model, costs and context.

Import from the submodules (``noema_graph.models.factory`` etc.); this package re-exports the
public names for convenience. Nothing here starts a server or opens a connection at import.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

# Eager, and light: the function shares its module's name, and importing the submodule
# anywhere would otherwise bind the package attribute to the module, not the function.
from noema_graph.models.structured import structured

if TYPE_CHECKING:
    from noema_graph.models.context import CompactionResult, compact_messages, count_tokens
    from noema_graph.models.factory import ModelSpec, make_model, parse_model_spec
    from noema_graph.models.grammar import bind_react_grammar, react_grammar
    from noema_graph.models.local import LocalModelServer, shared_local_server
    from noema_graph.models.pricing import estimate_cost_usd
    from noema_graph.models.profile import ModelProfile, model_profile

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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.models.context": ("CompactionResult", "compact_messages", "count_tokens"),
        "noema_graph.models.factory": ("ModelSpec", "make_model", "parse_model_spec"),
        "noema_graph.models.grammar": ("bind_react_grammar", "react_grammar"),
        "noema_graph.models.local": ("LocalModelServer", "shared_local_server"),
        "noema_graph.models.pricing": ("estimate_cost_usd",),
        "noema_graph.models.profile": ("ModelProfile", "model_profile"),
    },
)
