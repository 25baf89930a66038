"""The read-only ask graph: recall_memory -> generate_answer. No tools, no writes."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.graphs._wiring import add_nodes
from noema_graph.graphs.runtime import compile_graph, resolve_model
from noema_graph.nodes import generate_answer, recall_memory
from noema_graph.nodes.deps import make_deps
from noema_graph.observability import Observer
from noema_graph.state.agent import AskState
from noema_graph.storage.sqlite.persistence import CheckpointerArg


def build_ask_graph(
    config: AgentConfig | None = None,
    *,
    model: BaseChatModel | None = None,
    checkpointer: CheckpointerArg = None,
    store: BaseStore | None = None,
    observer: Observer | None = None,
) -> CompiledStateGraph[AskState, RunContext, AskState, AskState]:
    """Build the ask graph; ``config`` is forced into ask mode (no tools, no memory writes).

    ``observer`` instruments it as in :func:`~noema_graph.graphs.agent.build_agent_graph`.
    """
    base = config or AgentConfig()
    config = AgentConfig(
        **{**base.model_dump(exclude={"mode"}), "mode": "ask", "output_schema": base.output_schema}
    )
    deps = make_deps(config, model=resolve_model(model, config.model, "model"))
    builder = StateGraph(AskState, context_schema=RunContext)
    specs = [recall_memory.SPEC, generate_answer.SPEC]
    callbacks = add_nodes(builder, specs, deps, observer=observer, checkpointer=checkpointer)
    builder.add_edge(START, "recall_memory")
    builder.add_edge("recall_memory", "generate_answer")
    builder.add_edge("generate_answer", END)
    return compile_graph(
        builder, config, checkpointer=checkpointer, store=store, callbacks=callbacks
    )
