"""Run a Noema agent without graph plumbing: name, request, learner -> AgentOutput.

Graphs are built once per (agent, store, model) and share one in-memory checkpointer, so a
``thread_id`` continues a conversation (the Socratic tutor's turns) within the process.

Example:
    >>> out = run_agent("learning", "What next?", user_id="ada", db="demo.db")  # doctest: +SKIP
    >>> out.result["card_id"]  # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any
from uuid import uuid4

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.agents.factory import DEFAULT_LEARNING_DB, get_graph
from noema_graph.agents.learners import Learner, aresolve_learner, learner_request, resolve_learner
from noema_graph.agents.registry import default_registry
from noema_graph.context import RunContext
from noema_graph.hitl import paused_output, pending_of, resume_with
from noema_graph.persistence import serializer
from noema_graph.state.output import AgentOutput

_SAVER = InMemorySaver(serde=serializer())  # the same allow-list as the SQLite checkpointer
_LOCK = threading.Lock()
_GRAPHS: dict[tuple[str, str], tuple[BaseChatModel, Any]] = {}


@cache
def _default_model() -> BaseChatModel:
    from noema_graph.models.factory import make_model

    return make_model()


def _graph(name: str, model: BaseChatModel | None, db: Path) -> Any:
    """Return the cached graph of ``name`` over ``db`` for ``model``, building it once."""
    chat = model if model is not None else _default_model()
    key = (name, str(db.resolve()))
    with _LOCK:
        cached = _GRAPHS.get(key)
        if cached is None or cached[0] is not chat:
            cached = (chat, get_graph(name, model=chat, db=db, checkpointer=_SAVER))
            _GRAPHS[key] = cached
        return cached[1]


def _invocation(
    name: str,
    request: str,
    learner: Learner,
    thread_id: str | None,
    model: BaseChatModel | None,
    path: Path,
    timeout_s: float | None = None,
) -> tuple[Any, dict[str, Any], dict[str, Any], RunContext]:
    """Return (graph, inputs, config, context) of one run; shared by every entry point."""
    inputs = {"messages": [("user", learner_request(request, learner))]}
    config = {"configurable": {"thread_id": thread_id or uuid4().hex}}
    context = RunContext(user_id=learner.name, timeout_s=timeout_s)
    return _graph(name, model, path), inputs, config, context


def run_agent(
    name: str,
    request: str,
    *,
    user_id: str | int,
    thread_id: str | None = None,
    model: BaseChatModel | None = None,
    db: str | Path | None = None,
    timeout_s: float | None = None,
) -> AgentOutput:
    """Run agent ``name`` on ``request`` for learner ``user_id`` (name or id).

    Args:
        name: A registered agent (``learning``, ``calibration``...).
        request: What the agent should do.
        user_id: The learner's name or id in the store.
        thread_id: Continue this conversation; None starts a new one.
        model: Chat model; None means ``make_model()``.
        db: Learning store; None means ``noema-learning.sqlite``.
        timeout_s: The run's time budget in seconds; None keeps the agent's own limit.

    Raises:
        ConfigurationError: Unknown agent or learner.
    """
    path = Path(db) if db is not None else DEFAULT_LEARNING_DB
    learner = resolve_learner(path, user_id)
    graph, inputs, config, context = _invocation(
        name, request, learner, thread_id, model, path, timeout_s
    )
    graph.invoke(inputs, config, context=context)
    return _output(name, graph, config)


def _output(name: str, graph: Any, config: Any) -> AgentOutput:
    """Return the run's output contract, or a paused one when it waits for the user."""
    snapshot = graph.get_state(config)
    if open_requests := pending_of(snapshot.interrupts):
        agent = default_registry().get(name).to_config("")
        paused = paused_output(snapshot.values, open_requests, agent)
        thread = config["configurable"]["thread_id"]
        interrupts = [{**item, "thread_id": thread} for item in paused.interrupts]
        return paused.model_copy(update={"interrupts": interrupts})
    return AgentOutput.model_validate(snapshot.values["output"])


def resume_agent(
    name: str,
    thread_id: str,
    answer: Any,
    *,
    user_id: str | int,
    model: BaseChatModel | None = None,
    db: str | Path | None = None,
    timeout_s: float | None = None,
) -> AgentOutput:
    """Resume a run of ``name`` paused on ``thread_id`` with the user's ``answer``.

    ``answer``: text for a clarify request; for a confirm request ``"approve"``,
    ``"reject"``, a :class:`~noema_graph.state.human.Decision` or a dict of them by call id.
    With several open requests, a dict keyed by the ``id`` of ``output.interrupts``.

    Raises:
        HumanInputError: The answer does not fit the open request (nothing is changed).
    """
    path = Path(db) if db is not None else DEFAULT_LEARNING_DB
    learner = resolve_learner(path, user_id)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    graph = _graph(name, model, path)
    command = resume_with(graph, config, answer)
    graph.invoke(command, config, context=RunContext(user_id=learner.name, timeout_s=timeout_s))
    return _output(name, graph, config)


async def arun_agent(
    name: str,
    request: str,
    *,
    user_id: str | int,
    thread_id: str | None = None,
    model: BaseChatModel | None = None,
    db: str | Path | None = None,
    timeout_s: float | None = None,
) -> AgentOutput:
    """Run agent ``name`` like :func:`run_agent`, awaiting the model and tools."""
    stream = astream_agent(
        name, request, user_id=user_id, thread_id=thread_id, model=model, db=db,
        timeout_s=timeout_s,
    )  # fmt: skip
    async for item in stream:
        if isinstance(item, AgentOutput):  # the last item: the run's output
            return item
    raise AssertionError("astream_agent ended without an output")  # pragma: no cover


async def astream_agent(
    name: str,
    request: str,
    *,
    user_id: str | int,
    thread_id: str | None = None,
    model: BaseChatModel | None = None,
    db: str | Path | None = None,
    timeout_s: float | None = None,
) -> AsyncIterator[dict[str, Any] | AgentOutput]:
    """Yield the run's activity events (plain dicts), then its :class:`AgentOutput`."""
    path = Path(db) if db is not None else DEFAULT_LEARNING_DB
    learner = await aresolve_learner(path, user_id)
    graph, inputs, config, context = _invocation(
        name, request, learner, thread_id, model, path, timeout_s
    )
    async for chunk in graph.astream(inputs, config, stream_mode="custom", context=context):
        yield chunk
    yield _output(name, graph, config)
