"""The one factory that compiles any registered agent into its own StateGraph."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from noema_graph.agents.definition import AgentDefinition, AgentLimits
from noema_graph.agents.documents import document_checked, document_tools
from noema_graph.agents.domain_tools import domain_registry
from noema_graph.agents.learner_context import run_learner, with_learner_hooks
from noema_graph.agents.reader import request_reader
from noema_graph.agents.registry import AgentRegistry, default_registry
from noema_graph.agents.scope import scope_judge, scoped_reader
from noema_graph.agents.subagent import subagent_tool
from noema_graph.graphs import build_agent_graph
from noema_graph.graphs.agent import SPECS
from noema_graph.noema.location import store_location
from noema_graph.noema.schema import DEFAULT_LEARNING_DB
from noema_graph.storage.sqlite.persistence import CheckpointerArg

PARENT_ONLY = frozenset(
    {"clarify", "confirm_tools", "confirm_permissions", "confirm_non_idempotent", "hooks"}
)
"""Overrides that stay with the agent the caller runs, never passed to its subagents."""


def _subagent_tools(
    definition: AgentDefinition,
    *,
    model: BaseChatModel,
    db: str | Path,
    registry: AgentRegistry,
    overrides: Mapping[str, Any],
) -> list[BaseTool]:
    # A child keeps its own limits: only non-limit overrides (prices, protocol) pass down.
    # It never pauses for the user either: it runs inside a tool call, without a checkpointer.
    inherited = {
        k: v
        for k, v in overrides.items()
        if k not in AgentLimits.model_fields and k not in PARENT_ONLY
    }
    tools: list[BaseTool] = []
    for child_name in definition.subagents:
        child = registry.get(child_name)

        def build(child: AgentDefinition = child) -> CompiledStateGraph[Any, Any, Any, Any]:
            return build_agent(
                child,
                model=model,
                db=db,
                checkpointer=False,  # the child never writes into the parent's thread
                registry=registry,
                overrides=inherited,
                learner_from_context=False,  # the parent's run checked its learner
                judge_scope=False,  # the parent's request was judged; the child serves it
            )

        tools.append(subagent_tool(definition.name, child.name, child.description, build))
    return tools


def build_agent(
    definition: AgentDefinition | str,
    *,
    model: BaseChatModel,
    db: str | Path = DEFAULT_LEARNING_DB,
    checkpointer: CheckpointerArg = None,
    store: BaseStore | None = None,
    registry: AgentRegistry | None = None,
    overrides: Mapping[str, Any] | None = None,
    learner_from_context: bool = True,
    judge_scope: bool = True,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile ``definition`` (or the registered agent of that name) into its graph.

    The graph takes its learner from the run, never from the request's text:
    ``context=RunContext(user_id="ben")`` or ``{"configurable": {"user_id": "ben"}}``. The
    tools' owner arguments (``user_id``) are injected from it and hidden from the model
    (:mod:`noema_graph.agents.learner_context`; the store's learners are read now). A
    subagent's run inherits the learner of the call that started it.

    Args:
        definition: The agent, or its name in ``registry``.
        model: Chat model for every node.
        db: Learning store the domain tools work on: a SQLite path or a database URL.
        checkpointer: Saver for threads (multi-turn, resume); None or False for none.
        store: LangGraph store for long-term memory.
        registry: Where names (the agent, its subagents) are looked up; default: the ten agents.
        overrides: AgentConfig fields that win over the definition (``price_overrides``...).
        learner_from_context: Add the hook that checks the run's learner is in the store
            before the first node (False for subagents: the parent's run checked it).
        judge_scope: Refuse, before the agent's reader, a request that is clearly another
            registered agent's job (:mod:`noema_graph.agents.scope`; False for subagents).

    Raises:
        ConfigurationError: Unknown agent or subagent, or an invalid override.
    """
    registry = registry or default_registry()
    if isinstance(definition, str):
        definition = registry.get(definition)
    instructions = registry.prompts.render_for(definition)
    overrides = dict(overrides or {})
    config = definition.to_config(instructions, **overrides)
    path = store_location(db)
    learner = run_learner(path)
    if learner_from_context:
        hooks = with_learner_hooks(config.hooks, SPECS[0].name, learner)
        config = config.model_copy(update={"hooks": hooks})
    domain = domain_registry(path, definition.tools, definition.tool_arguments, learner.owner)
    tools = domain.as_langchain_tools(
        permissions=config.permissions, timeout_s=config.tool_timeout_s
    )
    tools += _subagent_tools(
        definition, model=model, db=path, registry=registry, overrides=overrides
    )
    if "request_reader" not in overrides:
        reader = request_reader(definition.name, definition.description, tools, path)
        if documents := document_tools(tools):
            reader = document_checked(reader, documents)
        judge = scope_judge(registry.get_all()) if judge_scope else None
        if judge is not None:
            reader = scoped_reader(reader, judge, definition.name)
        config = config.model_copy(update={"request_reader": reader})
    return build_agent_graph(
        config, model=model, tools=tools, checkpointer=checkpointer, store=store
    )


def get_graph(
    name: str,
    *,
    model: BaseChatModel | None = None,
    checkpointer: CheckpointerArg = None,
    store: BaseStore | None = None,
    db: str | Path | None = None,
    registry: AgentRegistry | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build the registered agent ``name``; see :func:`build_agent`.

    ``model`` None means ``make_model()`` (NOEMA_MODEL, else OpenAI with a key, else the
    embedded model); ``db`` None means :data:`DEFAULT_LEARNING_DB`.
    """
    if model is None:
        from noema_graph.models.factory import make_model

        model = make_model()
    return build_agent(
        name,
        model=model,
        db=DEFAULT_LEARNING_DB if db is None else db,
        checkpointer=checkpointer,
        store=store,
        registry=registry,
        overrides=overrides,
    )
