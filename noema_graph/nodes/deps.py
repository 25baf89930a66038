"""Build-time dependencies of a graph's nodes: config, models, tools, pricing.

A graph factory builds one :class:`AgentDeps` and binds it to every node; what changes per
run (user, trace id, abort switch) comes through :class:`~noema_graph.context.RunContext`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, Protocol, runtime_checkable

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from pydantic import BaseModel

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.effects import Steps, io
from noema_graph.memory import default_embedder
from noema_graph.models.grammar import bind_react_grammar
from noema_graph.models.keep_raw import keep_raw
from noema_graph.models.pricing import estimate_cost_usd
from noema_graph.models.profile import ModelProfile, model_profile
from noema_graph.models.structured import structured
from noema_graph.tools.concurrency import concurrency_safe as is_concurrency_safe

ChatRunnable = Runnable[list[BaseMessage], object]
"""A model as a node calls it: a chat model, a bound one or a structured-output wrapper."""

NodeRuntime = Runtime[RunContext]
"""The runtime a node gets: both graphs are built with ``context_schema=RunContext``."""

BOUND_MODELS = 8
"""Step models (one per distinct list of tools) an :class:`AgentDeps` keeps."""


@runtime_checkable
class ToolProvider(Protocol):
    """Tools that open lazily (MCP sessions) and must be closed when the run ends."""

    def get_tools(self) -> list[BaseTool]:
        """Open if needed and return the tools."""
        ...

    async def aget_tools(self) -> list[BaseTool]:
        """Async twin of get_tools."""
        ...

    def loaded_tools(self) -> list[BaseTool]:
        """Return the tools already loaded, without opening anything."""
        ...

    def close(self) -> None:
        """Release sessions and processes."""
        ...

    async def aclose(self) -> None:
        """Async twin of close."""
        ...


@dataclass(frozen=True)
class AgentDeps:
    """Everything a node needs that is fixed when the graph is built."""

    config: AgentConfig
    model: BaseChatModel
    planning_model: BaseChatModel
    profile: ModelProfile
    tools: tuple[BaseTool, ...] = ()
    providers: tuple[ToolProvider, ...] = ()

    @cached_property
    def embedder(self) -> Embeddings | None:
        """Return the offline embedder for semantic memory recall (None: keyword recall)."""
        return default_embedder()

    @cached_property
    def _structured(self) -> dict[tuple[int, type[BaseModel]], tuple[object, ChatRunnable]]:
        """Structured runnables built so far, by (model, schema)."""
        return {}

    @property
    def protocol(self) -> Literal["native", "react"]:
        """Return the action protocol: the config's choice, else the model's default."""
        if self.config.protocol != "auto":
            return self.config.protocol
        return self.profile.protocol

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """Return the USD cost of one call, or None when the model's price is unknown."""
        return estimate_cost_usd(
            self.profile.model_name,
            self.profile.provider,
            prompt_tokens,
            completion_tokens,
            self.config.price_overrides,
        )

    def structured(self, model: BaseChatModel, schema: type[BaseModel]) -> ChatRunnable:
        """Return ``model`` constrained to ``schema``; the output keeps the raw message."""
        # Plans and reflections are not chat tokens: never stream them (langchain-openai's
        # streamed json_schema path also emits pydantic serializer warnings).
        key = (id(model), schema)  # the entry keeps its model alive: the id names one object
        cached = self._structured.get(key)
        if cached is None:
            quiet = model.model_copy(update={"disable_streaming": True})
            runnable = keep_raw(structured(quiet, schema)) or structured(
                quiet, schema, include_raw=True
            )
            cached = self._structured[key] = (model, runnable.with_config(tags=["nostream"]))
        return cached[1]

    @cached_property
    def concurrency_safe(self) -> frozenset[str]:
        """Return the names of static tools whose calls may run concurrently."""
        return frozenset(t.name for t in self.tools if is_concurrency_safe(t))

    def safe_tool_names(self) -> frozenset[str]:
        """Return every tool name (static and from providers already open) safe to overlap."""
        if not self.providers:
            return self.concurrency_safe
        opened = [t for p in self.providers for t in p.loaded_tools()]
        return self.concurrency_safe | {t.name for t in opened if is_concurrency_safe(t)}

    def tool_list(self) -> list[BaseTool]:
        """Return the static tools followed by every provider's tools."""
        tools = list(self.tools)
        for provider in self.providers:
            tools.extend(provider.get_tools())
        return tools

    async def atool_list(self) -> list[BaseTool]:
        """Async twin of :meth:`tool_list`."""
        tools = list(self.tools)
        for provider in self.providers:
            tools.extend(await provider.aget_tools())
        return tools

    @cached_property
    def _bound(
        self,
    ) -> dict[tuple[int | str, ...], tuple[tuple[BaseTool, ...], ChatRunnable]]:
        """Step models built so far, by the identities of their tools."""
        return {}

    def step_model(
        self, tools: Sequence[BaseTool], schemas: Mapping[str, Mapping[str, Any]] | None = None
    ) -> ChatRunnable:
        """Return the model for execute_step: tools bound natively, or the ReAct grammar.

        Built once per list of tools and, for the grammar, per set of narrowed argument
        ``schemas`` (the values the run has seen; an MCP server's tools are new objects once
        its session is opened again): binding converts every tool's schema, each step
        otherwise. A native model gets the tools' own schemas (a call of an unseen value is
        refused before the tool runs instead).
        """
        if not tools and self.protocol != "react":
            return self.model
        react = self.protocol == "react"
        narrowed = json.dumps(schemas, sort_keys=True, default=str) if react and schemas else ""
        # the entry keeps its tools alive: an id names one object
        key = (*map(id, tools), narrowed)
        cached = self._bound.get(key)
        if cached is None:
            if react:
                runnable = bind_react_grammar(self.model, tools, schemas=schemas)
            else:
                runnable = self.model.bind_tools(list(tools))
            if len(self._bound) >= BOUND_MODELS:
                self._bound.pop(next(iter(self._bound)), None)  # the oldest
            cached = self._bound[key] = (tuple(tools), runnable)
        return cached[1]


def make_deps(
    config: AgentConfig,
    *,
    model: BaseChatModel,
    planning_model: BaseChatModel | None = None,
    tools: Sequence[BaseTool] = (),
    providers: Sequence[ToolProvider] = (),
) -> AgentDeps:
    """Build the dependencies of one graph."""
    return AgentDeps(
        config=config,
        model=model,
        planning_model=planning_model or model,
        profile=model_profile(model),
        tools=tuple(tools),
        providers=tuple(providers),
    )


def list_tools(deps: AgentDeps) -> Steps[list[BaseTool]]:
    """Return the graph's tools; opening providers (MCP sessions) is I/O, done as an effect."""
    if not deps.providers:
        return list(deps.tools)
    tools: list[BaseTool] = yield io(deps.tool_list, deps.atool_list)
    return tools
