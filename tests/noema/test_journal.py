"""The change journal on SQLite and PostgreSQL: journal, changes, undo, conflict, dry run."""

from __future__ import annotations

import pytest

from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.history import read_changes
from noema_graph.noema.journal import (
    JournalError,
    ThreadUndone,
    UndoConflict,
    journaled,
    thread_changes,
    undo_thread,
    undos_of,
)
from noema_graph.noema.journal_schema import (
    CONTEXT_TABLE,
    JOURNAL_TABLE,
    JOURNALED,
    SETS_TABLE,
    set_range,
)
from noema_graph.noema.schema import HISTORY_TABLES, MIGRATIONS
from noema_graph.noema.sql import INSERT_DECK
from noema_graph.noema.store import AsyncLearningStore, DryRun, LearningStore
from noema_graph.storage.sql.driver import Op, execute, fetch_all, insert
from tests.noema.conftest import Locate, table_names
from tests.noema.journal_helpers import as_call, snapshot


def _categories(store: LearningStore) -> tuple[int, int]:
    first = store.run(
        insert("INSERT INTO categories (name, parent_id) VALUES (?, NULL)", ("Capitals",))
    )
    second = store.run(
        insert("INSERT INTO categories (name, parent_id) VALUES (?, NULL)", ("Geography",))
    )
    return first, second


def _card(store: LearningStore, category: int | None = None) -> int:
    made = store.call(
        "create_cards",
        deck_id=1,
        cards=[{"front": "Capital of Spain?", "back": "Madrid", "category_id": category}],
    )
    return int(made.card_ids[0])


def _writing_sets(store: LearningStore) -> list[int]:
    """Return the change sets still open (none once a journaled transaction ends)."""
    query = f"SELECT id FROM {SETS_TABLE} WHERE writing IS NOT NULL"
    return [int(row["id"]) for row in store.run(fetch_all(query), write=False)]


def test_the_journal_names_every_learner_table_and_history_leaves_it_out(
    store: LearningStore,
) -> None:
    tables = table_names(store)
    learner = {t for t in tables if t not in HISTORY_TABLES and not t.startswith("cards_fts")}
    assert learner == set(JOURNALED)
    assert {JOURNAL_TABLE, SETS_TABLE} <= HISTORY_TABLES
    for table, spec in JOURNALED.items():
        row = store.run(fetch_all(f"SELECT * FROM {table} LIMIT 0"), write=False)
        assert row == []
        columns = store.run(
            fetch_all(
                f"SELECT name FROM pragma_table_info('{table}')",
                postgres="SELECT column_name AS name FROM information_schema.columns"
                f" WHERE table_schema = current_schema() AND table_name = '{table}'",
            ),
            write=False,
        )
        assert {str(c["name"]) for c in columns} == set(spec.columns), table


def test_a_write_is_journaled_with_thread_step_call_and_values(store: LearningStore) -> None:
    capitals, geography = _categories(store)
    card = _card(store, capitals)
    store.call_journaled(
        "move_card",
        {"card_id": card, "category_id": geography},
        as_call("t1", "c1", "move_card", 4),
    )
    (change,) = store.run(thread_changes("t1"), write=False)
    assert (change.thread_id, change.call_id, change.tool, change.step) == (
        "t1",
        "c1",
        "move_card",
        4,
    )
    assert (change.table, change.key, change.action) == ("cards", {"id": card}, "update")
    assert change.before is not None and change.after is not None
    assert (change.before["category_id"], change.after["category_id"]) == (capitals, geography)
    (shown,) = store.run(read_changes("t1"), write=False)
    assert shown.text == f"card {card}: category Capitals -> Geography"


def test_writes_outside_a_call_and_reads_are_not_journaled(store: LearningStore) -> None:
    _card(store)
    store.call_journaled("search_cards", {"query": "Spain"}, as_call("t1", "c1", "search_cards"))
    assert store.run(fetch_all(f"SELECT * FROM {JOURNAL_TABLE}"), write=False) == []
    assert _writing_sets(store) == []


def test_updates_that_change_nothing_are_left_out_and_their_set_shows_nothing(
    store: LearningStore,
) -> None:
    first, second = _card(store), _card(store)

    def same(*cards: int) -> Op[None]:
        for card in cards:
            yield from execute("UPDATE cards SET front = front WHERE id = ?", (card,))

    def then_real() -> Op[None]:
        yield from same(first)
        yield from execute("UPDATE cards SET back = 'Sevilla' WHERE id = ?", (second,))

    store.run(journaled(same(first, second), as_call("t1", "c1", "update_card")))
    assert store.run(thread_changes("t1"), write=False) == []  # the set is kept, closed
    assert len(store.run(fetch_all(f"SELECT * FROM {SETS_TABLE}"), write=False)) == 1
    assert _writing_sets(store) == []
    with pytest.raises(JournalError, match="no change in effect"):
        store.run(undo_thread("t1"))
    store.run(journaled(then_real(), as_call("t1", "c2", "update_card")))
    (change,) = store.run(thread_changes("t1"), write=False)
    assert (change.key, change.after and change.after["back"]) == ({"id": second}, "Sevilla")
    store.run(undo_thread("t1"))
    assert (
        store.run(fetch_all("SELECT back FROM cards WHERE id = ?", (second,)), write=False)[0][
            "back"
        ]
        == "Madrid"
    )


def test_a_failing_write_leaves_neither_rows_nor_journal(store: LearningStore) -> None:
    before = snapshot(store)
    cards = [{"front": "a", "back": "b"}, {"front": "c", "back": "d", "concepts": [" "]}]
    with pytest.raises(ToolInputError, match="concept name is empty"):  # after 2 inserts
        store.call_journaled(
            "create_cards", {"deck_id": 1, "cards": cards}, as_call("t1", "c1", "create_cards")
        )
    assert snapshot(store) == before
    assert store.run(fetch_all(f"SELECT * FROM {JOURNAL_TABLE}"), write=False) == []
    assert _writing_sets(store) == []


def test_undo_restores_every_table_and_can_itself_be_undone(store: LearningStore) -> None:
    capitals, geography = _categories(store)
    card = _card(store, capitals)
    original = snapshot(store)
    store.call_journaled(
        "move_card",
        {"card_id": card, "category_id": geography},
        as_call("t1", "c1", "move_card", 1),
    )
    review = {
        "user_id": 1,
        "card_id": card,
        "rating": 3,
        "response_time_ms": 900,
        "confidence": 0.7,
    }
    store.call_journaled("record_review", review, as_call("t1", "c2", "record_review", 3))
    link = {"source": "Spain", "target": "Madrid", "kind": "related_to"}
    store.call_journaled("link_concepts", link, as_call("t1", "c3", "link_concepts", 5))
    store.call_journaled(
        "create_cards",
        {
            "deck_id": 1,
            "cards": [{"front": "Capital of Peru?", "back": "Lima", "concepts": ["Peru"]}],
        },
        as_call("t1", "c4", "create_cards", 5),
    )
    store.call_journaled(
        "flag_card", {"card_id": card, "reason": "too easy"}, as_call("t1", "c5", "flag_card", 7)
    )
    store.call_journaled(
        "ingest_text",
        {"title": "Notes", "text": "Madrid is in Spain. " * 20},
        as_call("t1", "c6", "ingest_text", 7),
    )
    changed = snapshot(store)
    assert changed != original
    report = store.run(undo_thread("t1"))
    assert snapshot(store) == original
    assert report.calls == ["c6", "c5", "c4", "c3", "c2", "c1"]
    again = store.run(undo_thread(report.undo_id))  # the undo, undone: the run's changes back
    assert snapshot(store) == changed
    store.run(undo_thread(again.undo_id))
    assert snapshot(store) == original


def test_undo_from_a_step_keeps_the_earlier_changes(store: LearningStore) -> None:
    capitals, geography = _categories(store)
    card = _card(store, capitals)
    store.call_journaled(
        "move_card",
        {"card_id": card, "category_id": geography},
        as_call("t1", "c1", "move_card", 1),
    )
    after_move = snapshot(store)
    store.call_journaled(
        "flag_card", {"card_id": card, "reason": "vague"}, as_call("t1", "c2", "flag_card", 3)
    )
    report = store.run(undo_thread("t1", step=3))
    assert report.calls == ["c2"]
    assert snapshot(store) == after_move


def test_a_row_changed_since_is_a_conflict_and_nothing_is_written(store: LearningStore) -> None:
    capitals, geography = _categories(store)
    card = _card(store, capitals)
    store.call_journaled(
        "flag_card", {"card_id": card, "reason": "vague"}, as_call("t1", "c0", "flag_card", 1)
    )
    store.call_journaled(
        "move_card",
        {"card_id": card, "category_id": geography},
        as_call("t1", "c1", "move_card", 2),
    )
    store.call("move_card", card_id=card, category_id=None)  # the learner, since
    before = snapshot(store)
    journal = store.run(fetch_all(f"SELECT * FROM {JOURNAL_TABLE} ORDER BY id"), write=False)
    with pytest.raises(UndoConflict, match=f"card {card} changed since \\(category_id\\)") as info:
        store.run(undo_thread("t1"))
    assert len(info.value.rows) == 1
    assert snapshot(store) == before
    assert (
        store.run(fetch_all(f"SELECT * FROM {JOURNAL_TABLE} ORDER BY id"), write=False) == journal
    )


def test_an_undo_that_would_cascade_into_other_rows_is_a_conflict(store: LearningStore) -> None:
    store.call_journaled(
        "create_cards",
        {"deck_id": 1, "cards": [{"front": "Q", "back": "A"}]},
        as_call("t1", "c1", "create_cards"),
    )
    (card,) = [c.key["id"] for c in store.run(thread_changes("t1"), write=False)]
    store.call("flag_card", card_id=card, reason="later flag")  # not the run's row
    before = snapshot(store)
    with pytest.raises(UndoConflict, match=r"card flag .* would be deleted too"):
        store.run(undo_thread("t1"))
    assert snapshot(store) == before


def test_a_dry_run_writes_nothing_and_journals_would_be_changes(store: LearningStore) -> None:
    capitals, geography = _categories(store)
    card = _card(store, capitals)
    before = snapshot(store)
    preview = store.call_journaled(
        "move_card",
        {"card_id": card, "category_id": geography},
        as_call("t1", "c1", "move_card", dry_run=True),
    )
    assert isinstance(preview, DryRun)
    assert preview.lines() == [f"card {card}: would change category Capitals -> Geography"]
    assert preview.result.category_id == geography  # what the call would have returned
    assert snapshot(store) == before
    (change,) = store.run(thread_changes("t1"), write=False)
    assert change.dry_run
    with pytest.raises(JournalError, match="no change in effect"):
        store.run(undo_thread("t1"))


def test_a_dry_run_still_validates(store: LearningStore) -> None:
    with pytest.raises(ToolInputError, match="card_id"):
        store.call_journaled(
            "move_card",
            {"card_id": 999, "category_id": None},
            as_call("t1", "c1", "move_card", dry_run=True),
        )
    assert store.run(fetch_all(f"SELECT * FROM {JOURNAL_TABLE}"), write=False) == []


def test_a_write_after_an_undo_is_refused_until_the_undo_is_taken_back(
    store: LearningStore,
) -> None:
    capitals, geography = _categories(store)
    card = _card(store, capitals)
    move = {"card_id": card, "category_id": geography}
    store.call_journaled("move_card", move, as_call("t1", "c1", "move_card", 1))
    report = store.run(undo_thread("t1"))
    undone = snapshot(store)
    with pytest.raises(ThreadUndone, match=report.undo_id):
        store.call_journaled("move_card", move, as_call("t1", "c1", "move_card", 1))
    assert snapshot(store) == undone
    store.run(undo_thread(report.undo_id))
    store.call_journaled(
        "flag_card", {"card_id": card, "reason": "ok"}, as_call("t1", "c2", "flag_card", 3)
    )


def test_a_journal_row_naming_a_missing_table_stops_the_undo(store: LearningStore) -> None:
    card = _card(store)
    store.call_journaled(
        "flag_card", {"card_id": card, "reason": "x"}, as_call("t1", "c1", "flag_card")
    )
    store.run(execute(f"UPDATE {JOURNAL_TABLE} SET table_name = 'card_notes'"))
    before = snapshot(store)
    with pytest.raises(JournalError, match=r"table 'card_notes'.*no longer has"):
        store.run(undo_thread("t1"))
    assert snapshot(store) == before


def test_nothing_to_undo_is_an_error(store: LearningStore) -> None:
    with pytest.raises(JournalError, match="no change in effect"):
        store.run(undo_thread("nobody"))


async def test_the_async_store_journals_and_runs_dry_too(astore: AsyncLearningStore) -> None:
    made = await astore.call("create_cards", deck_id=1, cards=[{"front": "Q", "back": "A"}])
    card = made.card_ids[0]
    flag = {"card_id": card, "reason": "vague"}
    preview = await astore.call_journaled(
        "flag_card", flag, as_call("t1", "c1", "flag_card", dry_run=True)
    )
    assert isinstance(preview, DryRun) and preview.lines()[0].startswith("card flag ")
    assert await astore.run(fetch_all("SELECT * FROM card_flags"), write=False) == []
    await astore.call_journaled("flag_card", flag, as_call("t1", "c2", "flag_card"))
    found = await astore.run(thread_changes("t1"), write=False)
    assert [(c.call_id, c.dry_run, c.action) for c in found] == [
        ("c1", True, "insert"),
        ("c2", False, "insert"),
    ]
    await astore.run(undo_thread("t1"))
    assert await astore.run(fetch_all("SELECT * FROM card_flags"), write=False) == []


def _journaled_on_schema_3(card: int, category: int) -> Op[None]:
    """Move ``card`` as migration 3's journal did: a change set named in journal_context."""
    set_id = yield from insert(
        f"INSERT INTO {SETS_TABLE} (thread_id, call_id, tool, step, checkpoint_id, dry_run,"
        " reverts, created_at) VALUES ('old', 'c1', 'move_card', 2, NULL, 0, NULL, ?)",
        ("2026-01-01T00:00:00+00:00",),
    )
    yield from execute(f"INSERT INTO {CONTEXT_TABLE} (set_id) VALUES (?)", (set_id,))
    yield from execute("UPDATE cards SET category_id = ? WHERE id = ?", (category, card))
    yield from execute(f"DELETE FROM {CONTEXT_TABLE}")


def test_a_schema_3_journal_is_carried_into_schema_4_and_still_undoes(locate: Locate) -> None:
    where = locate("old")
    with LearningStore.open(where, migrations=MIGRATIONS[:3]) as old:
        old.run(insert(INSERT_DECK, ("Basics", "", "2025-01-01T00:00:00+00:00")))
        capitals, geography = _categories(old)
        card = _card(old, capitals)
        old.run(_journaled_on_schema_3(card, geography))
        (stored,) = old.run(fetch_all(f"SELECT set_id FROM {JOURNAL_TABLE}"), write=False)
    with LearningStore.open(where) as new:
        assert new.migration is not None and new.migration.applied == (4,)
        (change,) = new.run(thread_changes("old"), write=False)
        assert (change.call_id, change.tool, change.step, change.table) == (
            "c1",
            "move_card",
            2,
            "cards",
        )
        assert change.before is not None and change.after is not None
        assert (change.before["category_id"], change.after["category_id"]) == (capitals, geography)
        assert (change.set_id, change.id) == (stored["set_id"], set_range(stored["set_id"])[0])
        assert "journal_context" not in table_names(new)
        new.run(undo_thread("old"))
        row = new.run(fetch_all("SELECT category_id FROM cards WHERE id = ?", (card,)), write=False)
        assert row[0]["category_id"] == capitals
        (undo,) = new.run(undos_of("old"), write=False)
        assert [c.action for c in new.run(thread_changes(undo), write=False)] == ["update"]
        assert _writing_sets(new) == []
