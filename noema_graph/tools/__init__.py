"""Tools: a registry of specs, normalised results, built-in toolkits and MCP integration.

Public API:

* :class:`ToolRegistry`, :class:`ToolSpec`, :class:`ToolContext`, :class:`ToolResult`,
  :class:`ToolFailure`, :class:`TransientToolFailure`, :class:`RetryPolicy`;
* :func:`toolkits_for` builds the toolkits an :class:`~noema_graph.config.AgentConfig` enables;
* :func:`mcp_tools` and :class:`MCPToolProvider` load MCP servers' tools over one persistent
  session per server.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.tools.mcp_provider import MCPToolProvider, mcp_tools
    from noema_graph.tools.registry import ToolRegistry
    from noema_graph.tools.results import (
        ToolErrorInfo,
        ToolFailure,
        ToolResult,
        TransientToolFailure,
        render_observation,
    )
    from noema_graph.tools.runner import RetryPolicy, ToolRunner
    from noema_graph.tools.search import Document, SearchHit, SearchProvider, SqliteSearchProvider
    from noema_graph.tools.spec import Idempotency, ToolContext, ToolSpec
    from noema_graph.tools.toolkits import builtin_registry, toolkits_for

__all__ = [
    "Document",
    "Idempotency",
    "MCPToolProvider",
    "RetryPolicy",
    "SearchHit",
    "SearchProvider",
    "SqliteSearchProvider",
    "ToolContext",
    "ToolErrorInfo",
    "ToolFailure",
    "ToolRegistry",
    "ToolResult",
    "ToolRunner",
    "ToolSpec",
    "TransientToolFailure",
    "builtin_registry",
    "mcp_tools",
    "render_observation",
    "toolkits_for",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.tools.mcp_provider": ("MCPToolProvider", "mcp_tools"),
        "noema_graph.tools.registry": ("ToolRegistry",),
        "noema_graph.tools.results": (
            "ToolErrorInfo",
            "ToolFailure",
            "ToolResult",
            "TransientToolFailure",
            "render_observation",
        ),
        "noema_graph.tools.runner": ("RetryPolicy", "ToolRunner"),
        "noema_graph.tools.search": (
            "Document",
            "SearchHit",
            "SearchProvider",
            "SqliteSearchProvider",
        ),
        "noema_graph.tools.spec": ("Idempotency", "ToolContext", "ToolSpec"),
        "noema_graph.tools.toolkits": ("builtin_registry", "toolkits_for"),
    },
)
