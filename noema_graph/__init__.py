"""noema_graph: LangGraph agents that plan, act, reflect and report what they did and cost."""

from noema_graph.agents import AgentDefinition, AgentRegistry, get_graph
from noema_graph.cancellation import ainvoke_cancellable
from noema_graph.config import AgentConfig, MCPServer
from noema_graph.context import RunContext
from noema_graph.errors import ConfigurationError, NoemaError
from noema_graph.facade import arun_agent, astream_agent, run_agent
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
    "AgentDefinition",
    "AgentOutput",
    "AgentRegistry",
    "ConfigurationError",
    "MCPServer",
    "NoemaError",
    "RunContext",
    "ainvoke_cancellable",
    "arun_agent",
    "astream_agent",
    "async_sqlite_checkpointer",
    "async_sqlite_store",
    "build_agent_graph",
    "build_ask_graph",
    "get_graph",
    "prune",
    "run_agent",
    "sqlite_checkpointer",
    "sqlite_store",
]
