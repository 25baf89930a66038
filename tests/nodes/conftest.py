"""Fixtures of the node tests: each driven test runs once blocking and once awaited."""

from __future__ import annotations

import pytest

from tests.nodes.helpers import Path


@pytest.fixture(params=["sync", "async"])
def path(request: pytest.FixtureRequest) -> Path:
    """Return how the node is driven: ``drive`` (sync) or ``adrive`` (async)."""
    return request.param
