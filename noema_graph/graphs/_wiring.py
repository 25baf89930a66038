"""Small wiring helpers: bind build-time deps to nodes and config to routers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from langgraph._internal._runnable import RunnableCallable  # sync+async node with injection
from langgraph.runtime import Runtime

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext, context_of
from noema_graph.nodes.deps import AgentDeps
from noema_graph.nodes.hooks import Wrapped


def node(
    sync_fn: Callable[..., dict[str, Any]],
    async_fn: Callable[..., Awaitable[dict[str, Any]]],
    deps: AgentDeps,
) -> tuple[str, RunnableCallable]:
    """Return (name, runnable) for a node pair; the name is the sync function's name.

    The node runs inside the config's pre/post-process hooks and its update is stamped with
    its typed outcome.
    """
    name = sync_fn.__name__
    wrapped = Wrapped(name, partial(sync_fn, deps=deps), partial(async_fn, deps=deps), deps.config)
    return name, RunnableCallable(wrapped.sync, wrapped.async_, name=name)


def router(
    fn: Callable[[Any, AgentConfig, RunContext | None], Any], config: AgentConfig
) -> Callable[..., Any]:
    """Return ``fn`` as a LangGraph path function that receives the run context."""

    def route(state: Any, runtime: Runtime[RunContext]) -> Any:
        return fn(state, config, context_of(runtime.context))

    route.__name__ = fn.__name__
    return route
