"""Tools: a registry of specs, normalised results, built-in toolkits and MCP integration.

Public API:

* :class:`ToolRegistry`, :class:`ToolSpec`, :class:`ToolContext`, :class:`ToolResult`,
  :class:`ToolFailure`, :class:`TransientToolFailure`, :class:`RetryPolicy`;
* :func:`toolkits_for` builds the toolkits an :class:`~noema_graph.config.AgentConfig` enables;
  ``bash`` and ``python_executor`` run in a bubblewrap sandbox limited by a
  :class:`SandboxPolicy`; :func:`sandbox_problem` says why it cannot start here, if it cannot;
* :func:`mcp_tools` and :class:`MCPToolProvider` load MCP servers' tools over one persistent
  session per server;
* :func:`check_arguments` validates (and losslessly coerces) a call's arguments against any
  LangChain tool's schema, :func:`check_tool_schemas` refuses invalid schemas at build time;
* :func:`concurrency_safe` and :func:`execution_groups` decide which calls of one message
  may run concurrently.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.schemas import check_tool_schemas
    from noema_graph.tools.arguments import check_arguments
    from noema_graph.tools.concurrency import concurrency_safe, execution_groups
    from noema_graph.tools.jail import SandboxPolicy, sandbox_problem
    from noema_graph.tools.mcp_provider import MCPToolProvider, mcp_tools
    from noema_graph.tools.registry import ToolRegistry
    from noema_graph.tools.results import (
        ToolErrorInfo,
        ToolFailure,
        ToolFix,
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
    "SandboxPolicy",
    "SearchHit",
    "SearchProvider",
    "SqliteSearchProvider",
    "ToolContext",
    "ToolErrorInfo",
    "ToolFailure",
    "ToolFix",
    "ToolRegistry",
    "ToolResult",
    "ToolRunner",
    "ToolSpec",
    "TransientToolFailure",
    "builtin_registry",
    "check_arguments",
    "check_tool_schemas",
    "concurrency_safe",
    "execution_groups",
    "mcp_tools",
    "render_observation",
    "sandbox_problem",
    "toolkits_for",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.schemas": ("check_tool_schemas",),
        "noema_graph.tools.arguments": ("check_arguments",),
        "noema_graph.tools.concurrency": ("concurrency_safe", "execution_groups"),
        "noema_graph.tools.jail": ("SandboxPolicy", "sandbox_problem"),
        "noema_graph.tools.mcp_provider": ("MCPToolProvider", "mcp_tools"),
        "noema_graph.tools.registry": ("ToolRegistry",),
        "noema_graph.tools.results": (
            "ToolErrorInfo",
            "ToolFailure",
            "ToolFix",
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
