"""Wiring helpers: register node specs behind the one middleware layer, bind routers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.graph import StateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Send

from noema_graph.context import RunContext, context_of
from noema_graph.graphs.runtime import GraphStateT
from noema_graph.nodes.deps import AgentDeps
from noema_graph.nodes.llm import retry_policy
from noema_graph.nodes.middleware import Node
from noema_graph.nodes.spec import NodeSpec
from noema_graph.observability import Observer, default_observer
from noema_graph.state.agent import RouteState

Route = str | list[Send]
"""What a router returns: the next node's name, or the Sends of a group of tool calls."""
Router = Callable[..., Route]
"""A routing function of :mod:`noema_graph.nodes.routing` (state, config, context[, safe])."""


def add_nodes(
    builder: StateGraph[GraphStateT, RunContext, GraphStateT, GraphStateT],
    specs: Sequence[NodeSpec[Any, Any]],  # each node reads and writes its own types
    deps: AgentDeps,
    *,
    observer: Observer | None,
    checkpointer: object,
) -> list[BaseCallbackHandler]:
    """Add every spec as a :class:`Node`; the first spec starts runs, the last ends them.

    Nodes that call the model get LangGraph's ``RetryPolicy`` for transient model errors.
    Returns the callbacks the compiled graph must carry.
    """
    watcher = observer or default_observer()
    first, final = specs[0].name, specs[-1].name
    info, callbacks = watcher.prepare(
        deps.config,
        entry=first,
        final=final,
        checkpointer=checkpointer,
        tools=deps.tools,
        cost=deps.cost,
    )
    for spec in specs:
        node = Node(
            spec,
            deps,
            observer=watcher,
            info=info,
            first=spec.name == first,
            final=spec.name == final,
        )
        builder.add_node(
            spec.name, node, retry_policy=retry_policy(deps) if spec.calls_model else None
        )
    return callbacks


def router(fn: Router, deps: AgentDeps) -> Callable[[RouteState], Route]:
    """Return ``fn`` as a LangGraph path function given the config and run context.

    A router that takes ``safe`` also gets the names of the concurrency-safe tools. The run
    context is optional: ``update_state`` runs routers outside a run.
    """
    agent = deps.config
    wants_safe = "safe" in inspect.signature(fn).parameters

    def route(state: RouteState) -> Route:
        context = _run_context()
        if context is None:  # update_state: LangGraph reports 2 steps left, which means nothing
            kept = {k: v for k, v in state.items() if k != "remaining_steps"}
            state = cast(RouteState, kept)
            context = context_of(None)
        if wants_safe:
            return fn(state, agent, context, deps.safe_tool_names())
        return fn(state, agent, context)

    route.__name__ = fn.__name__
    return route


def _run_context() -> RunContext | None:
    """Return the run's context; None outside a run (``update_state``, or no config at all)."""
    try:
        # typed as a Runtime, but None when update_state runs a router outside a run
        runtime = cast(Runtime[RunContext] | None, get_runtime())
    except RuntimeError:  # outside any runnable: no config at all
        return None
    return None if runtime is None else context_of(runtime.context)
