"""noema_graph: LangGraph agents that plan, act, reflect and report what they did and cost."""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.agents import AgentDefinition, AgentRegistry, get_graph
    from noema_graph.cancellation import ainvoke_cancellable
    from noema_graph.config import AgentConfig, MCPServer
    from noema_graph.context import RunContext
    from noema_graph.errors import ConfigurationError, HookVeto, HumanInputError, NoemaError
    from noema_graph.facade import arun_agent, astream_agent, resume_agent, run_agent
    from noema_graph.graphs import build_agent_graph, build_ask_graph
    from noema_graph.hitl import approve, edit, pending, reject, resume_with
    from noema_graph.hooks import HookCall, Hooks
    from noema_graph.noema.history import changes, undo
    from noema_graph.state.outcome import Outcome
    from noema_graph.state.output import AgentOutput
    from noema_graph.storage.backends import Backend, open_async_backend, open_backend
    from noema_graph.storage.lease import ThreadBusy
    from noema_graph.storage.serde import allowed_types
    from noema_graph.storage.sqlite.persistence import (
        async_sqlite_checkpointer,
        async_sqlite_store,
        prune,
        serializer,
        sqlite_checkpointer,
        sqlite_store,
    )

__all__ = [
    "AgentConfig",
    "AgentDefinition",
    "AgentOutput",
    "AgentRegistry",
    "Backend",
    "ConfigurationError",
    "HookCall",
    "HookVeto",
    "Hooks",
    "HumanInputError",
    "MCPServer",
    "NoemaError",
    "Outcome",
    "RunContext",
    "ThreadBusy",
    "ainvoke_cancellable",
    "allowed_types",
    "approve",
    "arun_agent",
    "astream_agent",
    "async_sqlite_checkpointer",
    "async_sqlite_store",
    "build_agent_graph",
    "build_ask_graph",
    "changes",
    "edit",
    "get_graph",
    "open_async_backend",
    "open_backend",
    "pending",
    "prune",
    "reject",
    "resume_agent",
    "resume_with",
    "run_agent",
    "serializer",
    "sqlite_checkpointer",
    "sqlite_store",
    "undo",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.agents": ("AgentDefinition", "AgentRegistry", "get_graph"),
        "noema_graph.cancellation": ("ainvoke_cancellable",),
        "noema_graph.config": ("AgentConfig", "MCPServer"),
        "noema_graph.context": ("RunContext",),
        "noema_graph.errors": ("ConfigurationError", "HookVeto", "HumanInputError", "NoemaError"),
        "noema_graph.facade": ("arun_agent", "astream_agent", "resume_agent", "run_agent"),
        "noema_graph.graphs": ("build_agent_graph", "build_ask_graph"),
        "noema_graph.hitl": ("approve", "edit", "pending", "reject", "resume_with"),
        "noema_graph.hooks": ("HookCall", "Hooks"),
        "noema_graph.noema.history": ("changes", "undo"),
        "noema_graph.state.outcome": ("Outcome",),
        "noema_graph.state.output": ("AgentOutput",),
        "noema_graph.storage.backends": ("Backend", "open_async_backend", "open_backend"),
        "noema_graph.storage.lease": ("ThreadBusy",),
        "noema_graph.storage.serde": ("allowed_types",),
        "noema_graph.storage.sqlite.persistence": (
            "async_sqlite_checkpointer",
            "async_sqlite_store",
            "prune",
            "serializer",
            "sqlite_checkpointer",
            "sqlite_store",
        ),
    },
)
