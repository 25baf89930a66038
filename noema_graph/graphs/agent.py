"""The agent graph: plan -> execute_step -> (tool_node -> execute_step)* ... -> finalize."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.graphs._wiring import node, router
from noema_graph.graphs.runtime import compile_graph, resolve_tools
from noema_graph.nodes.deps import make_deps
from noema_graph.nodes.execute_step import aexecute_step, execute_step
from noema_graph.nodes.finalize import afinalize, finalize
from noema_graph.nodes.plan import aplan, plan
from noema_graph.nodes.reflect import areflect, reflect
from noema_graph.nodes.review_tools import areview_tools, review_tools
from noema_graph.nodes.revise_plan import arevise_plan, revise_plan
from noema_graph.nodes.routing import route_after_execute, route_after_reflect, route_after_review
from noema_graph.nodes.tool_node import atool_node, tool_node
from noema_graph.observability import Observer
from noema_graph.persistence import CheckpointerArg
from noema_graph.state.agent import AgentState


def build_agent_graph(
    config: AgentConfig | None = None,
    *,
    model: BaseChatModel,
    tools: Sequence[BaseTool] = (),
    checkpointer: CheckpointerArg = None,
    store: BaseStore | None = None,
    planning_model: BaseChatModel | None = None,
    observer: Observer | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build and compile the agent graph for ``config`` with ``model`` and ``tools``.

    Toolkits and MCP servers named in the config are added to ``tools``. The graph runs
    with durability "sync" and a recursion limit derived from the config's limits, and is
    instrumented by ``observer`` (logs, metrics, spans, event log; the default one if None).
    """
    config = config or AgentConfig()
    static, providers = resolve_tools(config, tools)
    deps = make_deps(
        config, model=model, planning_model=planning_model, tools=static, providers=providers
    )
    builder = StateGraph(AgentState, context_schema=RunContext)
    builder.add_node(*node(plan, aplan, deps))
    builder.add_node(*node(execute_step, aexecute_step, deps))
    builder.add_node(*node(review_tools, areview_tools, deps))
    builder.add_node(*node(tool_node, atool_node, deps))
    builder.add_node(*node(reflect, areflect, deps))
    builder.add_node(*node(revise_plan, arevise_plan, deps))
    builder.add_node(*node(finalize, afinalize, deps))
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "execute_step")
    builder.add_conditional_edges(
        "execute_step",
        router(route_after_execute, config),
        ["review_tools", "tool_node", "reflect", "execute_step", "finalize"],
    )
    builder.add_conditional_edges(
        "review_tools", router(route_after_review, config), ["tool_node", "finalize"]
    )
    builder.add_edge("tool_node", "execute_step")
    builder.add_conditional_edges(
        "reflect", router(route_after_reflect, config), ["revise_plan", "execute_step", "finalize"]
    )
    builder.add_edge("revise_plan", "execute_step")
    builder.add_edge("finalize", END)
    return compile_graph(
        builder, config, checkpointer=checkpointer, store=store, deps=deps, observer=observer
    )
