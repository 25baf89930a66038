"""noema_graph: LangGraph agents that plan, act, reflect and report what they did and cost."""

from noema_graph.config import AgentConfig, MCPServer
from noema_graph.context import RunContext
from noema_graph.errors import ConfigurationError, NoemaError
from noema_graph.graphs import build_agent_graph, build_ask_graph
from noema_graph.persistence import (
    async_sqlite_checkpointer,
    async_sqlite_store,
    prune,
    sqlite_checkpointer,
    sqlite_store,
)
from noema_graph.state.output import AgentOutput

__all__ = [
    "AgentConfig",
    "AgentOutput",
    "ConfigurationError",
    "MCPServer",
    "NoemaError",
    "RunContext",
    "async_sqlite_checkpointer",
    "async_sqlite_store",
    "build_agent_graph",
    "build_ask_graph",
    "prune",
    "sqlite_checkpointer",
    "sqlite_store",
]
