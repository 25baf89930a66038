"""Tools: a registry of specs, normalised results, built-in toolkits and MCP integration.

Public API:

* :class:`ToolRegistry`, :class:`ToolSpec`, :class:`ToolContext`, :class:`ToolResult`,
  :class:`ToolFailure`, :class:`TransientToolFailure`, :class:`RetryPolicy`;
* :func:`toolkits_for` builds the toolkits an :class:`~noema_graph.config.AgentConfig` enables;
* :func:`mcp_tools` and :class:`MCPToolProvider` load MCP servers' tools over one persistent
  session per server.
"""

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
