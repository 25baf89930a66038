from __future__ import annotations

import pytest

from noema_graph.noema.errors import SchemaVersionError
from noema_graph.noema.schema import MIGRATIONS, SCHEMA_VERSION, Migration
from noema_graph.noema.store import AsyncLearningStore, LearningStore
from noema_graph.storage.sql.driver import execute, fetch_all
from noema_graph.storage.urls import store_errors
from tests.noema.conftest import Locate, table_names

FUTURE = "INSERT INTO schema_version VALUES (?, 'future', '2030-01-01T00:00:00+00:00')"


def test_fresh_database_gets_every_migration(locate: Locate) -> None:
    where = locate("a")
    with LearningStore.open(where) as store:
        assert store.migration.previous_version == 0
        assert store.migration.applied == tuple(m.version for m in MIGRATIONS)
        assert store.schema_version() == SCHEMA_VERSION
        tables = table_names(store)
        if store.dialect == "sqlite":
            mode = store.connection.execute("PRAGMA journal_mode").fetchone()[0]
            fks = store.connection.execute("PRAGMA foreign_keys").fetchone()[0]
            assert mode == "wal"
            assert fks == 1
            assert "cards_fts" in tables
    assert {
        "users",
        "decks",
        "cards",
        "reviews",
        "card_states",
        "concepts",
        "concept_links",
        "categories",
        "sources",
        "chunks",
        "card_flags",
        "schema_version",
    } <= tables


def test_reopening_an_up_to_date_database_is_a_no_op(locate: Locate) -> None:
    where = locate("a")
    LearningStore.open(where).close()
    with LearningStore.open(where) as store:
        assert store.migration.applied == ()
        assert store.migration.previous_version == SCHEMA_VERSION
        rows = store.run(fetch_all("SELECT version FROM schema_version ORDER BY version"))
    assert [r["version"] for r in rows] == [m.version for m in MIGRATIONS]


def test_later_migration_is_applied_in_order_on_reopen(locate: Locate) -> None:
    where = locate("a")
    LearningStore.open(where).close()
    extra = Migration(SCHEMA_VERSION + 1, "notes", ("CREATE TABLE notes (id INTEGER PRIMARY KEY)",))
    with LearningStore.open(where, migrations=(*MIGRATIONS, extra)) as store:
        assert store.migration.applied == (extra.version,)
        assert "notes" in table_names(store)


def test_failing_migration_rolls_back_completely(locate: Locate) -> None:
    where = locate("a")
    LearningStore.open(where).close()
    broken = Migration(
        SCHEMA_VERSION + 1,
        "broken",
        ("CREATE TABLE half (id INTEGER)", "CREATE TABLE oops (syntax error"),
    )
    with pytest.raises(store_errors()):
        LearningStore.open(where, migrations=(*MIGRATIONS, broken))
    with LearningStore.open(where) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert "half" not in table_names(store)


def test_database_from_a_newer_version_is_refused(locate: Locate) -> None:
    where = locate("a")
    with LearningStore.open(where) as store:
        store.run(execute(FUTURE, (99,)))
    with pytest.raises(
        SchemaVersionError, match=rf"version 99 is newer .* supports \({SCHEMA_VERSION}\)"
    ) as info:
        LearningStore.open(where)
    assert info.value.found == 99


async def test_async_open_migrates_and_refuses_newer(locate: Locate) -> None:
    where = locate("a")
    async with await AsyncLearningStore.open(where) as store:
        assert await store.schema_version() == SCHEMA_VERSION
    async with await AsyncLearningStore.open(where) as store:
        assert store.migration.applied == ()
        await store.run(execute(FUTURE, (7,)))
    with pytest.raises(SchemaVersionError):
        await AsyncLearningStore.open(where)
