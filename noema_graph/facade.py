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
from typing import Any, Required
from uuid import uuid4

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from typing_extensions import TypedDict, Unpack

from noema_graph.agents.factory import DEFAULT_LEARNING_DB, get_graph
from noema_graph.agents.learners import Learner, aresolve_learner, resolve_learner
from noema_graph.agents.registry import default_registry
from noema_graph.context import RunContext
from noema_graph.errors import ConfigurationError, NoemaError
from noema_graph.hitl import paused_output, pending_of, resume_with
from noema_graph.noema.history import change_summary
from noema_graph.noema.location import Location, store_location
from noema_graph.state.output import AgentOutput
from noema_graph.storage.serde import serializer

_SAVER = InMemorySaver(serde=serializer())  # the same allow-list as the SQLite checkpointer
_LOCK = threading.Lock()
_GRAPHS: dict[tuple[str, str], tuple[BaseChatModel, Any]] = {}


@cache
def _default_model() -> BaseChatModel:
    from noema_graph.models.factory import make_model

    return make_model()


def _graph(name: str, model: BaseChatModel | None, db: Location) -> Any:
    """Return the cached graph of ``name`` over ``db`` for ``model``, building it once."""
    chat = model if model is not None else _default_model()
    key = (name, str(db.resolve()) if isinstance(db, Path) else db)
    with _LOCK:
        cached = _GRAPHS.get(key)
        if cached is None or cached[0] is not chat:
            cached = (chat, get_graph(name, model=chat, db=db, checkpointer=_SAVER))
            _GRAPHS[key] = cached
        return cached[1]


class RunOptions(TypedDict, total=False):
    """The keyword options of every entry point (:func:`run_agent` and its siblings).

    Attributes:
        user_id: The learner's name or id in the store (required).
        model: Chat model; None means ``make_model()``.
        db: Learning store: a SQLite path or a ``postgresql://`` URL; None means
            ``noema-learning.sqlite``.
        timeout_s: The run's time budget in seconds; None keeps the agent's own limit.
        dry_run: Write tools report what they would change and write nothing (the change
            journal keeps the would-be changes: :func:`noema_graph.changes`).
    """

    user_id: Required[str | int]
    model: BaseChatModel | None
    db: str | Path | None
    timeout_s: float | None
    dry_run: bool


class StartOptions(RunOptions, total=False):
    """:class:`RunOptions` plus ``thread_id``: continue this conversation (None: a new one)."""

    thread_id: str | None


def _session(
    name: str, options: RunOptions, path: Location, learner: Learner
) -> tuple[Any, RunContext]:
    """Return (graph, context) of one run of ``name``; shared by every entry point."""
    context = RunContext(
        user_id=learner.name,
        timeout_s=options.get("timeout_s"),
        dry_run=bool(options.get("dry_run", False)),
    )
    return _graph(name, options.get("model"), path), context


def _path(options: RunOptions) -> Location:
    db = options.get("db")
    return store_location(db) if db is not None else DEFAULT_LEARNING_DB


def _user(options: RunOptions) -> str | int:
    if "user_id" not in options:  # typed as required; a caller may still leave it out
        raise ConfigurationError(
            "user_id", "no learner given", fix="pass user_id= (the learner's name or id)"
        )
    return options["user_id"]


def _start(request: str, options: StartOptions) -> tuple[Any, RunnableConfig]:
    """Return (inputs, config) of a new turn (the learner travels in the run's context)."""
    inputs = {"messages": [("user", request)]}
    thread_id = options.get("thread_id") or uuid4().hex
    return inputs, {"configurable": {"thread_id": thread_id}}


def run_agent(name: str, request: str, **options: Unpack[StartOptions]) -> AgentOutput:
    """Run agent ``name`` (``learning``, ``calibration``...) on ``request``.

    ``options``: ``user_id`` (required: the learner's name or id), ``thread_id`` (continue
    this conversation; None starts a new one), ``model``, ``db``, ``timeout_s`` (see
    :class:`RunOptions`).

    Raises:
        ConfigurationError: Unknown agent or learner.
    """
    path = _path(options)
    learner = resolve_learner(path, _user(options))
    graph, context = _session(name, options, path, learner)
    inputs, config = _start(request, options)
    graph.invoke(inputs, config, context=context)
    return _with_changes(_output(name, graph, config), path, config)


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
    name: str, thread_id: str, answer: object, **options: Unpack[RunOptions]
) -> AgentOutput:
    """Resume a run of ``name`` paused on ``thread_id`` with the user's ``answer``.

    ``answer``: text for a clarify request; for a confirm request ``"approve"``,
    ``"reject"``, a :class:`~noema_graph.state.human.Decision` or a dict of them by call id.
    With several open requests, a dict keyed by the ``id`` of ``output.interrupts``.
    ``options`` as for :func:`run_agent` (:class:`RunOptions`).

    Raises:
        HumanInputError: The answer does not fit the open request (nothing is changed).
    """
    path = _path(options)
    learner = resolve_learner(path, _user(options))
    graph, context = _session(name, options, path, learner)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    graph.invoke(resume_with(graph, config, answer), config, context=context)
    return _with_changes(_output(name, graph, config), path, config)


async def arun_agent(name: str, request: str, **options: Unpack[StartOptions]) -> AgentOutput:
    """Run agent ``name`` like :func:`run_agent`, awaiting the model and tools."""
    async for item in astream_agent(name, request, **options):
        if isinstance(item, AgentOutput):  # the last item: the run's output
            return item
    raise NoemaError("astream_agent ended without an output")  # pragma: no cover


async def astream_agent(
    name: str, request: str, **options: Unpack[StartOptions]
) -> AsyncIterator[dict[str, object] | AgentOutput]:
    """Yield the run's activity events (plain dicts), then its :class:`AgentOutput`."""
    path = _path(options)
    learner = await aresolve_learner(path, _user(options))
    graph, context = _session(name, options, path, learner)
    inputs, config = _start(request, options)
    async for chunk in graph.astream(inputs, config, stream_mode="custom", context=context):
        yield chunk
    yield _with_changes(_output(name, graph, config), path, config)


def _with_changes(output: AgentOutput, path: Location, config: Any) -> AgentOutput:
    """Return ``output`` with ``metadata.changes``: what the run changed (or would)."""
    summary = change_summary(config["configurable"]["thread_id"], path)
    meta = output.metadata.model_copy(update={"changes": summary.model_dump()})
    return output.model_copy(update={"metadata": meta})
