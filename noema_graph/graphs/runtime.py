"""Compile settings shared by every graph, and tool resolution from the config."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.errors import ConfigurationError
from noema_graph.graphs.leased import leased
from noema_graph.hooks import AGENT
from noema_graph.nodes.deps import ToolProvider
from noema_graph.schemas import check_tool_schemas
from noema_graph.state.agent import AgentState, AskState
from noema_graph.storage.sqlite.persistence import CheckpointerArg
from noema_graph.tools import MCPToolProvider, toolkits_for
from noema_graph.tools.ask_user import ask_user_tool

# Save a checkpoint after every superstep before the next one starts, so a crash never
# re-runs a finished tool call (under "async" a SIGKILL can lose several supersteps).
DURABILITY = "sync"
DURABILITY_KEY = "__pregel_durability"
"""The config key Pregel reads a graph's default durability from (what ``durability=`` sets)."""


GraphStateT = TypeVar("GraphStateT", AgentState, AskState)
"""The state schema of the graph being built (``AgentState`` or ``AskState``)."""


def compile_graph(
    builder: StateGraph[GraphStateT, RunContext, GraphStateT, GraphStateT],
    config: AgentConfig,
    *,
    checkpointer: CheckpointerArg,
    store: BaseStore | None,
    callbacks: list[BaseCallbackHandler],
) -> CompiledStateGraph[GraphStateT, RunContext, GraphStateT, GraphStateT]:
    """Compile ``builder`` with the limits' recursion bound and sync durability.

    ``callbacks`` (the observer's) ride along with the caller's. Every run of a thread holds
    the thread's lease (:mod:`noema_graph.graphs.leased`).
    """
    _check_hooks(config, set(builder.nodes))
    graph = leased(builder.compile(checkpointer=checkpointer, store=store, name=config.name))
    if checkpointer is None or checkpointer is False:
        # durability means nothing without a saver, and langgraph 1.2.22 crashes on "sync"
        # without one ('SyncPregelLoop' has no attribute '_put_checkpoint_fut')
        return graph.with_config(recursion_limit=config.recursion_limit(), callbacks=callbacks)
    return graph.with_config(
        recursion_limit=config.recursion_limit(),
        configurable={DURABILITY_KEY: DURABILITY},
        callbacks=callbacks,
    )


def resolve_model(given: BaseChatModel | None, spec: str | None, field: str) -> BaseChatModel:
    """Return the model passed in, else ``make_model(AgentConfig.<field>)``.

    With neither, ``make_model()`` picks the default from the environment (the embedded
    model when no API key is set).
    """
    if given is not None:
        return given
    from noema_graph.models.factory import make_model  # the OpenAI client loads only here

    try:
        return make_model(spec)
    except ConfigurationError as exc:
        raise ConfigurationError(f"AgentConfig.{field}", str(exc), fix=exc.fix) from None


_PROVIDERS: weakref.WeakKeyDictionary[object, tuple[ToolProvider, ...]] = (
    weakref.WeakKeyDictionary()
)


def own_providers(graph: object, providers: Sequence[ToolProvider]) -> None:
    """Record that ``graph`` owns ``providers`` (MCP sessions), for :func:`close_tools`."""
    if providers:
        _PROVIDERS[graph] = tuple(providers)


def close_tools(graph: object) -> None:
    """Stop the MCP servers of ``graph`` (they also stop when the process exits).

    Sessions belong to the compiled graph, not to a run: every run, concurrent ones
    included, shares them. Close them when the graph is no longer needed; a later run opens
    them again.
    """
    for provider in _PROVIDERS.get(graph, ()):
        provider.close()


async def aclose_tools(graph: object) -> None:
    """Async :func:`close_tools`."""
    for provider in _PROVIDERS.get(graph, ()):
        await provider.aclose()


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
    check_tool_schemas(static)
    names = [t.name for t in static]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigurationError(
            "tools", f"duplicate tool names {duplicates}", fix="give every tool a unique name"
        )
    return static, providers
