from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from noema_graph.noema.errors import SchemaVersionError
from noema_graph.noema.schema import MIGRATIONS, SCHEMA_VERSION, Migration
from noema_graph.noema.store import AsyncLearningStore, LearningStore


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    conn.close()
    return {r[0] for r in rows}


def test_fresh_database_gets_every_migration(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with LearningStore.open(path) as store:
        assert store.migration.previous_version == 0
        assert store.migration.applied == tuple(m.version for m in MIGRATIONS)
        assert store.schema_version() == SCHEMA_VERSION
        mode = store.connection.execute("PRAGMA journal_mode").fetchone()[0]
        fks = store.connection.execute("PRAGMA foreign_keys").fetchone()[0]
    assert mode == "wal"
    assert fks == 1
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
        "cards_fts",
    } <= _tables(path)


def test_reopening_an_up_to_date_database_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    LearningStore.open(path).close()
    with LearningStore.open(path) as store:
        assert store.migration.applied == ()
        assert store.migration.previous_version == SCHEMA_VERSION
        rows = store.connection.execute("SELECT version FROM schema_version").fetchall()
    assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]


def test_later_migration_is_applied_in_order_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    LearningStore.open(path).close()
    extra = Migration(SCHEMA_VERSION + 1, "notes", ("CREATE TABLE notes (id INTEGER PRIMARY KEY)",))
    with LearningStore.open(path, migrations=(*MIGRATIONS, extra)) as store:
        assert store.migration.applied == (extra.version,)
    assert "notes" in _tables(path)


def test_failing_migration_rolls_back_completely(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    LearningStore.open(path).close()
    broken = Migration(
        SCHEMA_VERSION + 1,
        "broken",
        ("CREATE TABLE half (id INTEGER)", "CREATE TABLE oops (syntax error"),
    )
    with pytest.raises(sqlite3.OperationalError):
        LearningStore.open(path, migrations=(*MIGRATIONS, broken))
    assert "half" not in _tables(path)
    with LearningStore.open(path) as store:
        assert store.schema_version() == SCHEMA_VERSION


def test_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    LearningStore.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO schema_version VALUES (99, 'future', '2030-01-01T00:00:00+00:00')"
        )
    conn.close()
    with pytest.raises(SchemaVersionError, match=r"version 99 is newer .* supports \(2\)") as info:
        LearningStore.open(path)
    assert info.value.found == 99


async def test_async_open_migrates_and_refuses_newer(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    async with await AsyncLearningStore.open(path) as store:
        assert await store.schema_version() == SCHEMA_VERSION
    async with await AsyncLearningStore.open(path) as store:
        assert store.migration.applied == ()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (7, 'future', '2030-01-01T00:00:00+00:00')")
    conn.close()
    with pytest.raises(SchemaVersionError):
        await AsyncLearningStore.open(path)
