"""Fixtures of the model tests: the embedded local model and two small tools."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, tool

from noema_graph.models import make_model, shared_local_server


@tool
def search(query: str, max_results: int = 3) -> str:
    """Search the web for ``query``."""
    return f"{max_results} results for {query}"


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as '2 * 3'."""
    return expression


@pytest.fixture
def tools() -> list[BaseTool]:
    """Return the two tools the grammar tests offer the model."""
    return [search, calculator]


@pytest.fixture(scope="session")
def local_model() -> Iterator[BaseChatModel]:
    """Return ``make_model('local')``, short answers, on the shared server of this session."""
    yield make_model("local", max_tokens=64)
    shared_local_server().stop()


@pytest.fixture
def react_model(local_model: BaseChatModel) -> BaseChatModel:
    """Return the local model with room for a thought plus an action (same server)."""
    return make_model("local", max_tokens=160)
