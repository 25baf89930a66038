"""Graph factories for ``langgraph.json`` (``langgraph dev``, LangGraph Studio).

Each function builds one graph when the LangGraph server asks for it; the server supplies
the checkpointer and store. The model comes from ``make_model()`` (NOEMA_MODEL, else OpenAI
with OPENAI_API_KEY, else the embedded model) and the learning store from NOEMA_LEARNING_DB
(default ``noema-learning.sqlite``): this module is an edge, so it reads the environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from noema_graph.agents.factory import DEFAULT_LEARNING_DB, get_graph
from noema_graph.graphs import build_ask_graph

Graph = CompiledStateGraph[Any, Any, Any, Any]


def _db() -> Path:
    return Path(os.environ.get("NOEMA_LEARNING_DB", str(DEFAULT_LEARNING_DB)))


def agent_graph(name: str) -> Callable[[], Graph]:
    """Return the factory that builds agent ``name``'s graph when the server asks for it."""

    def build() -> Graph:
        return get_graph(name, db=_db())

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Build the {name} agent's graph."
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


def ask() -> Graph:
    """Build the read-only ask graph."""
    from noema_graph.models.factory import make_model

    return build_ask_graph(model=make_model())
