"""Graph factories for ``langgraph.json`` (``langgraph dev``, LangGraph Studio).

The LangGraph server calls a factory inside its event loop for every request that needs the
graph (a run, a thread's state or history, an assistant's schemas); the server supplies the
checkpointer and store. Building a graph reads the agent catalog and the learning store, and
the first build starts the embedded model (about a second of loading and health checks), so
each factory here is a coroutine that builds in a worker thread: nothing blocks the loop, and
``langgraph dev`` runs without ``--allow-blocking``. A build is cheap (about 15 ms) and reads
the store's learners afresh, so nothing is cached between requests.

The model comes from ``make_model()`` (NOEMA_MODEL, else OpenAI with OPENAI_API_KEY, else
the embedded model) and the learning store from NOEMA_LEARNING_DB (a path or a database
URL), else from NOEMA_DATABASE_URL when that is PostgreSQL (the server's own database, as
under Aegra: the learning tables sit beside the checkpoints), else ``noema-learning.sqlite``
(see :func:`noema_graph.noema.location.learning_location`), the tools that wait for approval
from NOEMA_CONFIRM_TOOLS: this module is an edge, so it reads the environment. The learner
is given the LangGraph way, ``"context": {"user_id": "ben"}`` (or ``configurable``); see
:mod:`noema_graph.agents.learner_context`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from pydantic import ConfigDict
from pydantic.json_schema import SkipJsonSchema

from noema_graph.agents.factory import get_graph
from noema_graph.context import RunContext
from noema_graph.graphs import build_ask_graph
from noema_graph.noema.location import learning_location

Graph = CompiledStateGraph[Any, Any, Any, Any]


@dataclass(frozen=True)
class ServerContext(RunContext):
    """The run context as the LangGraph server describes it (``/assistants/{id}/schemas``).

    A :class:`RunContext` (the nodes read it as one) whose ``abort`` event, which no JSON
    client can send, is left out of the JSON schema: pydantic cannot describe a
    ``threading.Event``, and the server answered 500 for the schemas of every graph.
    """

    __pydantic_config__ = ConfigDict(arbitrary_types_allowed=True)  # for threading.Event

    abort: SkipJsonSchema[threading.Event | None] = None


def _db() -> str | Path:
    return learning_location(None, env=os.environ)


def _overrides() -> dict[str, Any]:
    """Return the approvals the deployment asks for: ``NOEMA_CONFIRM_TOOLS=flag_card,move_card``.

    Like ``noema-graph run --confirm``: a call to a listed tool pauses the run until the caller
    resumes it with a decision (``Command(resume="approve")``).
    """
    names = [n.strip() for n in os.environ.get("NOEMA_CONFIRM_TOOLS", "").split(",")]
    confirm = tuple(n for n in names if n)
    return {"confirm_tools": confirm} if confirm else {}


def served(graph: Graph) -> Graph:
    """Return ``graph`` with the context schema the server can describe (:class:`ServerContext`)."""
    return graph.copy(update={"context_schema": ServerContext})


def _build_agent(name: str) -> Graph:
    return served(get_graph(name, db=_db(), overrides=_overrides()))


def _build_ask() -> Graph:
    from noema_graph.models.factory import make_model

    return served(build_ask_graph(model=make_model()))


def agent_graph(name: str) -> Callable[[], Awaitable[Graph]]:
    """Return the factory that builds agent ``name``'s graph, off the event loop."""

    async def build() -> Graph:
        return await asyncio.to_thread(_build_agent, name)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Build the {name} agent's graph in a worker thread."
    return build


learning = agent_graph("learning")
diagnostic = agent_graph("diagnostic")
strategy = agent_graph("strategy")
content_generation = agent_graph("content_generation")
socratic_tutor = agent_graph("socratic_tutor")
calibration = agent_graph("calibration")
ingestion = agent_graph("ingestion")
knowledge_graph = agent_graph("knowledge_graph")
taxonomy_curator = agent_graph("taxonomy_curator")
governance = agent_graph("governance")


async def ask() -> Graph:
    """Build the read-only ask graph in a worker thread."""
    return await asyncio.to_thread(_build_ask)
