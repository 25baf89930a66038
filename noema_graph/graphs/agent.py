"""The agent graph: plan -> execute_step -> (tool_node -> execute_step)* ... -> finalize."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.graphs._wiring import Router, add_nodes, router
from noema_graph.graphs.runtime import (
    compile_graph,
    own_providers,
    resolve_model,
    resolve_tools,
)
from noema_graph.nodes import (
    execute_step,
    finalize,
    plan,
    reflect,
    review_tools,
    revise_plan,
    tool_node,
)
from noema_graph.nodes.deps import make_deps
from noema_graph.nodes.routing import (
    route_after_execute,
    route_after_reflect,
    route_after_tools,
    route_next,
)
from noema_graph.observability import Observer
from noema_graph.state.agent import AgentState
from noema_graph.storage.sqlite.persistence import CheckpointerArg

SPECS = [
    plan.SPEC,
    execute_step.SPEC,
    review_tools.SPEC,
    tool_node.SPEC,
    reflect.SPEC,
    revise_plan.SPEC,
    finalize.SPEC,
]
"""The agent graph's nodes; the first starts a run, the last ends it."""
NEXT = ["execute_step", "reflect", "finalize"]
AFTER_REFLECT = ["revise_plan", "execute_step", "finalize"]
ROUTES: list[tuple[str, Router, list[str]]] = [
    ("plan", route_next, NEXT),
    ("execute_step", route_after_execute, ["review_tools", "tool_node", *NEXT]),
    ("review_tools", route_after_tools, ["tool_node", *NEXT]),
    ("tool_node", route_after_tools, ["tool_node", *NEXT]),
    ("reflect", route_after_reflect, AFTER_REFLECT),
    ("revise_plan", route_next, NEXT),
]
"""The conditional edges: (source node, its router, the nodes the router may pick)."""


def build_agent_graph(
    config: AgentConfig | None = None,
    *,
    model: BaseChatModel | None = None,
    tools: Sequence[BaseTool] = (),
    checkpointer: CheckpointerArg = None,
    store: BaseStore | None = None,
    planning_model: BaseChatModel | None = None,
    observer: Observer | None = None,
) -> CompiledStateGraph[AgentState, RunContext, AgentState, AgentState]:
    """Build and compile the agent graph for ``config`` with ``model`` and ``tools``.

    ``model`` (and ``planning_model``) default to ``make_model(config.model)`` (and
    ``config.planning_model``, else the main model). Toolkits and MCP servers named in the
    config are added to ``tools``. The graph runs with durability "sync" and a recursion
    limit derived from the config's limits, and is instrumented by ``observer`` (logs,
    metrics, spans, event log; the default one if None).
    """
    config = config or AgentConfig()
    static, providers = resolve_tools(config, tools)
    planner = planning_model
    if planner is None and config.planning_model is not None:
        planner = resolve_model(None, config.planning_model, "planning_model")
    main = resolve_model(model, config.model, "model")
    deps = make_deps(config, model=main, planning_model=planner, tools=static, providers=providers)
    builder = StateGraph(AgentState, context_schema=RunContext)
    callbacks = add_nodes(builder, SPECS, deps, observer=observer, checkpointer=checkpointer)
    builder.add_edge(START, "plan")
    for source, route, targets in ROUTES:
        builder.add_conditional_edges(source, router(route, deps), targets)
    builder.add_edge("finalize", END)
    graph = compile_graph(
        builder, config, checkpointer=checkpointer, store=store, callbacks=callbacks
    )
    own_providers(graph, deps.providers)
    return graph
