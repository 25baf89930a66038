"""Fixtures for the learning domain: every store fixture runs on SQLite and on PostgreSQL.

SQLite stores are real files under tmp_path. PostgreSQL stores live in a real server started
once per session (:mod:`tests.pg`), each in a fresh schema of one database (the URL sets
``search_path``), which is much cheaper than a database per test and as isolated. When the
server cannot start the PostgreSQL cases skip, loudly; under CI (``CI`` or
``NOEMA_REQUIRE_MCP`` set) they fail instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote
from uuid import uuid4

import pytest

from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.sql import INSERT_DECK, INSERT_USER
from noema_graph.noema.store import AsyncLearningStore, LearningStore
from noema_graph.storage.sql.driver import fetch_all, insert
from tests.pg import PostgresServer

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
BACKENDS = ("sqlite", "postgres")
Locate = Callable[[str], "str | Path"]
"""Return the location of a new, empty learning store (the name tells them apart)."""


@pytest.fixture(scope="session")
def noema_pg(pg_server: PostgresServer) -> str:
    """Return the URL of a database on the session's server for the tests' schemas."""
    return pg_server.create_database(f"noema_learning_{uuid4().hex[:8]}")


def schema_url(database_url: str, name: str) -> str:
    """Create schema ``name`` and return a URL whose connections work inside it."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    return f"{database_url}?options={quote(f'-csearch_path={name}')}"


def _locator(backend: str, request: pytest.FixtureRequest, folder: Path) -> Locate:
    if backend == "sqlite":
        return lambda name: folder / f"{name}.db"
    database_url: str = request.getfixturevalue("noema_pg")
    return lambda name: schema_url(database_url, f"{name}_{uuid4().hex[:10]}")


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The database of the test's stores (module scope: a module runs on one, then the other)."""
    return str(request.param)


@pytest.fixture
def locate(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Locate:
    """Return a function giving new store locations on this test's backend."""
    return _locator(backend, request, tmp_path)


@pytest.fixture(scope="module")
def module_locate(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Locate:
    """Module-scoped :func:`locate`, for data written once per module."""
    return _locator(backend, request, tmp_path_factory.mktemp("stores"))


@pytest.fixture
def store(locate: Locate) -> Iterator[LearningStore]:
    """A migrated store holding user 1 ('uma') and deck 1 ('Basics')."""
    with LearningStore.open(locate("learn")) as opened:
        opened.run(insert(INSERT_USER, ("uma", "2025-01-01T00:00:00+00:00")))
        opened.run(insert(INSERT_DECK, ("Basics", "", "2025-01-01T00:00:00+00:00")))
        yield opened


@pytest.fixture
async def astore(locate: Locate) -> AsyncIterator[AsyncLearningStore]:
    """The async twin of ``store``."""
    async with await AsyncLearningStore.open(locate("alearn")) as opened:
        await opened.run(insert(INSERT_USER, ("uma", "2025-01-01T00:00:00+00:00")))
        await opened.run(insert(INSERT_DECK, ("Basics", "", "2025-01-01T00:00:00+00:00")))
        yield opened


@pytest.fixture(scope="module")
def demo(module_locate: Locate) -> DemoSummary:
    """Demo data written once per test module and backend (read-only use)."""
    return write_demo_data(module_locate("demo"))


@pytest.fixture
def demo_store(demo: DemoSummary) -> Iterator[LearningStore]:
    """The demo database, opened for reading."""
    with LearningStore.open(demo.path) as opened:
        yield opened


def table_names(store: LearningStore) -> set[str]:
    """Return the names of the store's tables (in its schema, on PostgreSQL)."""
    sql = (
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        if store.dialect == "sqlite"
        else "SELECT table_name AS name FROM information_schema.tables"
        " WHERE table_schema = current_schema()"
    )
    return {str(row["name"]) for row in store.run(fetch_all(sql), write=False)}
