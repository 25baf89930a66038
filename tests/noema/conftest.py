"""Fixtures for the learning domain: real SQLite files under tmp_path."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.driver import insert
from noema_graph.noema.sql import INSERT_DECK, INSERT_USER
from noema_graph.noema.store import AsyncLearningStore, LearningStore

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LearningStore]:
    """A migrated store holding user 1 ('uma') and deck 1 ('Basics')."""
    with LearningStore.open(tmp_path / "learn.db") as opened:
        opened.run(insert(INSERT_USER, ("uma", "2025-01-01T00:00:00+00:00")))
        opened.run(insert(INSERT_DECK, ("Basics", "", "2025-01-01T00:00:00+00:00")))
        yield opened


@pytest.fixture
async def astore(tmp_path: Path) -> AsyncIterator[AsyncLearningStore]:
    """The async twin of ``store``."""
    async with await AsyncLearningStore.open(tmp_path / "alearn.db") as opened:
        await opened.run(insert(INSERT_USER, ("uma", "2025-01-01T00:00:00+00:00")))
        await opened.run(insert(INSERT_DECK, ("Basics", "", "2025-01-01T00:00:00+00:00")))
        yield opened


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """Demo data written once per test module (read-only use)."""
    return write_demo_data(tmp_path_factory.mktemp("demo") / "demo.db")


@pytest.fixture
def demo_store(demo: DemoSummary) -> Iterator[LearningStore]:
    """The demo database, opened for reading."""
    with LearningStore.open(demo.path) as opened:
        yield opened
