"""Graph factories for ``langgraph.json`` (``langgraph dev``, LangGraph Studio).

Each function builds one graph when the LangGraph server asks for it; the server supplies
the checkpointer and store. The model comes from ``make_model()`` (NOEMA_MODEL, else OpenAI
with OPENAI_API_KEY, else the embedded model) and the learning store from NOEMA_LEARNING_DB
(default ``noema-learning.sqlite``): this module is an edge, so it reads the environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from noema_graph.agents.factory import DEFAULT_LEARNING_DB, get_graph
from noema_graph.graphs import build_ask_graph

Graph = CompiledStateGraph[Any, Any, Any, Any]


def _db() -> Path:
    return Path(os.environ.get("NOEMA_LEARNING_DB", str(DEFAULT_LEARNING_DB)))


def _agent(name: str) -> Graph:
    return get_graph(name, db=_db())


def learning() -> Graph:
    """Build the learning agent's graph."""
    return _agent("learning")


def diagnostic() -> Graph:
    """Build the diagnostic agent's graph."""
    return _agent("diagnostic")


def strategy() -> Graph:
    """Build the strategy agent's graph."""
    return _agent("strategy")


def content_generation() -> Graph:
    """Build the content generation agent's graph."""
    return _agent("content_generation")


def socratic_tutor() -> Graph:
    """Build the Socratic tutor's graph."""
    return _agent("socratic_tutor")


def calibration() -> Graph:
    """Build the calibration agent's graph."""
    return _agent("calibration")


def ingestion() -> Graph:
    """Build the ingestion agent's graph."""
    return _agent("ingestion")


def knowledge_graph() -> Graph:
    """Build the knowledge graph agent's graph."""
    return _agent("knowledge_graph")


def taxonomy_curator() -> Graph:
    """Build the taxonomy curator's graph."""
    return _agent("taxonomy_curator")


def governance() -> Graph:
    """Build the governance agent's graph."""
    return _agent("governance")


def ask() -> Graph:
    """Build the read-only ask graph."""
    from noema_graph.models.factory import make_model

    return build_ask_graph(model=make_model())
