from __future__ import annotations

from typing import Any

from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.sql import INSERT_CARD
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import fetch_all, insert
from tests.noema.conftest import Locate


def test_finds_exactly_the_seeded_bad_cards(demo: DemoSummary, demo_store: LearningStore) -> None:
    report = demo_store.call("find_quality_issues")
    assert report.cards_scanned == demo.cards
    found: dict[str, list[int]] = {}
    for issue in report.issues:
        found.setdefault(issue.kind, []).append(issue.card_id)
    assert found == demo.bad_cards
    duplicates = [i for i in report.issues if i.kind.endswith("duplicate")]
    assert all(i.related_card_ids and i.related_card_ids[0] < i.card_id for i in duplicates)


def test_deck_filter(demo: DemoSummary, demo_store: LearningStore) -> None:
    report = demo_store.call("find_quality_issues", deck_id=demo.decks["Cell Biology"])
    assert [i.kind for i in report.issues] == ["cloze_without_deletion"]


def test_each_rule_on_a_small_store(store: LearningStore) -> None:
    rows = [
        ("atomic", "Capital of Peru?", "Lima"),
        ("atomic", "Capital of Peru?", "Lima"),
        ("atomic", "capital of  PERU", "Lima!"),
        ("atomic", "", "x"),
        ("cloze", "No deletion.", "x"),
        ("cloze", "{{c1::Lima}} is in {{c2::lima}}", "x"),
        ("cloze", "{{c1::Lima}} is in {{c2::Peru}}", "x"),
    ]
    for kind, front, back in rows:
        store.run(insert(INSERT_CARD, (1, None, kind, front, back, "[]", "t", "t")))
    issues = [(i.card_id, i.kind) for i in store.call("find_quality_issues").issues]
    assert issues == [
        (2, "exact_duplicate"),
        (3, "near_duplicate"),
        (4, "empty_front"),
        (5, "cloze_without_deletion"),
        (6, "duplicate_cloze_deletion"),
    ]


def test_flag_quality_issues_flags_every_issue_once(demo: DemoSummary, locate: Locate) -> None:
    copy = write_demo_data(locate("flags"), seed=demo.seed).path  # the same cards
    bad = sorted({card_id for ids in demo.bad_cards.values() for card_id in ids})
    with LearningStore.open(copy) as store:
        first = store.call("flag_quality_issues")
        again = store.call("flag_quality_issues")  # idempotent: the same flags, refreshed
        rows = store.run(fetch_all("SELECT card_id, severity FROM card_flags"), write=False)
    assert first.flagged_cards == bad == again.flagged_cards
    assert first.issues == store_issues(demo)
    assert sorted({row["card_id"] for row in rows}) == bad and len(rows) == len(first.issues)
    by_card = {issue.card_id: issue for issue in first.issues}
    assert all(row["severity"] == by_card[row["card_id"]].severity for row in rows)


def store_issues(demo: DemoSummary) -> list[Any]:
    with LearningStore.open(demo.path) as store:
        return store.call("find_quality_issues").issues
