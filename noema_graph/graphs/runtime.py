"""Compile settings shared by every graph, and tool resolution from the config."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool
from langgraph._internal._constants import CONFIG_KEY_DURABILITY
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from noema_graph.config import AgentConfig
from noema_graph.errors import ConfigurationError
from noema_graph.hooks import AGENT
from noema_graph.nodes.deps import AgentDeps, ToolProvider
from noema_graph.observability import Observer, default_observer
from noema_graph.persistence import CheckpointerArg
from noema_graph.tools import MCPToolProvider, toolkits_for
from noema_graph.tools.ask_user import ask_user_tool

# Save a checkpoint after every superstep before the next one starts, so a crash never
# re-runs a finished tool call (under "async" a SIGKILL can lose several supersteps).
DURABILITY = "sync"


def compile_graph(
    builder: StateGraph[Any, Any, Any, Any],
    config: AgentConfig,
    *,
    checkpointer: CheckpointerArg,
    store: BaseStore | None,
    deps: AgentDeps,
    observer: Observer | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile ``builder`` with the limits' recursion bound and sync durability.

    Every node is instrumented by ``observer`` (the default one when None): logs, metrics,
    OpenTelemetry spans and the event log; its callbacks ride along with the caller's.
    """
    _check_hooks(config, set(builder.nodes))
    callbacks = (observer or default_observer()).instrument(
        builder, config, checkpointer=checkpointer, tools=deps.tools, cost=deps.cost
    )
    graph = builder.compile(checkpointer=checkpointer, store=store, name=config.name)
    if checkpointer is None or checkpointer is False:
        # durability means nothing without a saver, and langgraph 1.2.22 crashes on "sync"
        # without one ('SyncPregelLoop' has no attribute '_put_checkpoint_fut')
        return graph.with_config(recursion_limit=config.recursion_limit(), callbacks=callbacks)
    return graph.with_config(
        recursion_limit=config.recursion_limit(),
        configurable={CONFIG_KEY_DURABILITY: DURABILITY},
        callbacks=callbacks,
    )


def _check_hooks(config: AgentConfig, nodes: set[str]) -> None:
    unknown = sorted(config.hooks.names() - nodes - {AGENT})
    if unknown:
        raise ConfigurationError(
            "hooks",
            f"no node named {unknown[0]!r} in the {config.mode} graph",
            fix=f"key hooks by one of {sorted(nodes)} or {AGENT!r} (the whole run)",
        )


def resolve_tools(
    config: AgentConfig, tools: Sequence[BaseTool]
) -> tuple[list[BaseTool], list[ToolProvider]]:
    """Return the static tools (given + toolkits) and lazy providers (MCP) for ``config``."""
    static = [*tools, *toolkits_for(config), *([ask_user_tool()] if config.clarify else [])]
    providers: list[ToolProvider] = []
    if config.mcp_servers:
        providers.append(MCPToolProvider(config.mcp_servers))
    names = [t.name for t in static]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigurationError(
            "tools", f"duplicate tool names {duplicates}", fix="give every tool a unique name"
        )
    return static, providers
