"""A SQLite connection's TEMP journal objects: made once, kept by the pool, one call at a time.

A journaled call opens its change set with one INSERT into the connection's TEMP
``noema_journal_call`` and closes it with one DELETE (``SQLITE_SESSION``); these tests check
that the objects belong to the connection, survive pooling, and that a connection lent to
another run journals under that run's ids only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from noema_graph.noema.clock import now_db, to_db, utc_now
from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.journal import SESSION, thread_changes
from noema_graph.noema.journal_schema import CALL_TABLE, CONTEXT_TABLE, SETS_TABLE
from noema_graph.noema.schema import MIGRATIONS
from noema_graph.noema.sql import INSERT_DECK, INSERT_USER
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.connections import SqliteConnection, close_pools
from noema_graph.storage.sql.driver import fetch_all, insert
from tests.noema.journal_helpers import as_call

NOW = "2025-01-01T00:00:00+00:00"


@pytest.fixture(autouse=True)
def _no_kept_connections() -> Iterator[None]:
    close_pools()
    yield
    close_pools()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A migrated store file with user 1, deck 1 and one card (id 1)."""
    path = tmp_path / "learn.sqlite"
    with LearningStore.open(path) as store:
        store.run(insert(INSERT_USER, ("uma", NOW)))
        store.run(insert(INSERT_DECK, ("Basics", "", NOW)))
        store.call("create_cards", deck_id=1, cards=[{"front": "Capital of Spain?", "back": "?"}])
    return path


def _temp_names(store: LearningStore) -> set[str]:
    rows = store.connection.execute("SELECT name FROM temp.sqlite_master").fetchall()
    return {str(row[0]) for row in rows}


def _open_rows(store: LearningStore) -> list[object]:
    """Return what a finished call must leave behind: nothing open, in TEMP or the store."""
    rows = store.run(fetch_all(f"SELECT * FROM {CALL_TABLE}"), write=False)
    return [*rows, *store.run(fetch_all(f"SELECT * FROM {CONTEXT_TABLE}"), write=False)]


def test_a_pooled_connection_keeps_its_temp_objects_for_the_next_borrower(db: Path) -> None:
    with LearningStore.open(db, pooled=True) as store:
        first = store.db
        assert isinstance(first, SqliteConnection)
        assert SESSION in first.prepared
        assert {CALL_TABLE, f"{CALL_TABLE}_open", f"{CALL_TABLE}_close"} <= _temp_names(store)
    with LearningStore.open(db, pooled=True) as store:
        assert store.db is first  # the same connection, lent again: nothing made twice
        store.call_journaled(
            "update_card", {"card_id": 1, "back": "Madrid"}, as_call("t", "c1", "x")
        )
        assert [c.call_id for c in store.run(thread_changes("t"), write=False)] == ["c1"]


def test_the_temp_objects_belong_to_the_connection(db: Path) -> None:
    with LearningStore.open(db, pooled=True) as store:
        assert CALL_TABLE in _temp_names(store)
    other = sqlite3.connect(db)
    try:  # another connection (a learner's script) sees none, and its writes are not journaled
        assert other.execute("SELECT name FROM temp.sqlite_master").fetchall() == []
        with other:
            other.execute("UPDATE cards SET back = 'Lisbon' WHERE id = 1")
    finally:
        other.close()
    with LearningStore.open(db) as store:
        assert store.run(fetch_all(f"SELECT * FROM {SETS_TABLE}"), write=False) == []


def test_a_lent_connection_journals_under_each_runs_own_ids(db: Path) -> None:
    calls = [("run-a", "a1", "Madrid"), ("run-b", "b1", "Lisbon"), ("run-a", "a2", "Rome")]
    for thread, call, back in calls:
        with LearningStore.open(db, pooled=True) as store:
            change = as_call(thread, call, "update_card", step=len(call))
            store.call_journaled("update_card", {"card_id": 1, "back": back}, change)
            assert _open_rows(store) == []
    with LearningStore.open(db, pooled=True) as store:
        a = store.run(thread_changes("run-a"), write=False)
        b = store.run(thread_changes("run-b"), write=False)
    assert [(c.call_id, c.after and c.after["back"]) for c in a] == [
        ("a1", "Madrid"),
        ("a2", "Rome"),
    ]
    assert [(c.call_id, c.before and c.before["back"]) for c in b] == [("b1", "Madrid")]


def test_a_failed_call_leaves_the_connection_ready_for_the_next(db: Path) -> None:
    with LearningStore.open(db, pooled=True) as store:
        with pytest.raises(ToolInputError):
            store.call_journaled(
                "update_card", {"card_id": 99, "back": "x"}, as_call("t", "bad", "x")
            )
        assert _open_rows(store) == []
        assert store.run(fetch_all(f"SELECT * FROM {SETS_TABLE}"), write=False) == []
    with LearningStore.open(db, pooled=True) as store:  # the same connection, lent again
        store.call_journaled(
            "update_card", {"card_id": 1, "back": "Madrid"}, as_call("t", "ok", "x")
        )
        assert [c.call_id for c in store.run(thread_changes("t"), write=False)] == ["ok"]


def test_a_store_without_the_journal_opens_and_writes_with_the_temp_objects(
    tmp_path: Path,
) -> None:
    with LearningStore.open(tmp_path / "v2.sqlite", migrations=MIGRATIONS[:2], pooled=True) as old:
        assert CALL_TABLE in _temp_names(old)  # made, but nothing fires them
        old.run(insert(INSERT_USER, ("uma", NOW)))
        assert old.schema_version() == 2


def test_now_db_is_to_db_of_utc_now() -> None:
    before = to_db(utc_now())
    assert before <= now_db() <= to_db(utc_now())
