"""SQLite and PostgreSQL hold the same demo data and answer every read operation alike.

The demo is written into both; each table's rows and each read operation's result must be
equal, except search scores (BM25 on SQLite, ts_rank on PostgreSQL), where the same cards
must be found.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.sql import CONTENT_TABLES
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import fetch_all
from tests.noema.conftest import schema_url

NOW = "2025-04-30T12:00:00+00:00"
READS: list[tuple[str, dict[str, Any]]] = [
    ("list_due_cards", {"user_id": 1, "now": NOW, "limit": 60}),
    ("list_due_cards", {"user_id": 2, "deck_id": 2, "now": NOW, "include_new": False}),
    ("get_card", {"card_id": 7}),
    ("get_review_history", {"user_id": 3, "limit": 300}),
    ("schedule_preview", {"user_id": 1, "card_id": 3, "now": NOW}),
    ("get_concept_graph", {}),
    ("get_concept_graph", {"concept": "NOBLE GASES", "depth": 2}),
    ("list_categories", {}),
    ("compute_calibration", {"user_id": 2}),
    ("learning_stats", {"user_id": 1, "now": NOW}),
    ("get_chunks", {"source_id": 1}),
    ("find_quality_issues", {}),
]


@pytest.fixture(scope="module")
def both(
    noema_pg: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DemoSummary, DemoSummary]:
    """The demo written into a SQLite file and into a PostgreSQL schema."""
    sqlite = write_demo_data(Path(tmp_path_factory.mktemp("agree")) / "demo.db")
    postgres = write_demo_data(schema_url(noema_pg, f"agree_{uuid4().hex[:10]}"))
    return sqlite, postgres


def _rows(where: str, table: str) -> list[dict[str, Any]]:
    with LearningStore.open(where) as store:
        rows = store.run(fetch_all(f"SELECT * FROM {table} ORDER BY 1, 2"), write=False)
    return [dict(row) for row in rows]


def test_the_same_rows_in_both(both: tuple[DemoSummary, DemoSummary]) -> None:
    sqlite, postgres = both
    assert sqlite.model_dump(exclude={"path", "seconds"}) == postgres.model_dump(
        exclude={"path", "seconds"}
    )
    for table in CONTENT_TABLES:
        assert _rows(sqlite.path, table) == _rows(postgres.path, table), table


@pytest.mark.parametrize(("name", "arguments"), READS, ids=[name for name, _ in READS])
def test_read_operations_agree(
    both: tuple[DemoSummary, DemoSummary], name: str, arguments: dict[str, Any]
) -> None:
    results = []
    for summary in both:
        with LearningStore.open(summary.path) as store:
            results.append(store.call(name, **arguments).model_dump())
    assert results[0] == results[1]


@pytest.mark.parametrize("query", ["capital", "the", "Paris", "photosynthesis light", "zzz"])
def test_search_finds_the_same_cards(both: tuple[DemoSummary, DemoSummary], query: str) -> None:
    found = []
    for summary in both:
        with LearningStore.open(summary.path) as store:
            hits = store.call("search_cards", query=query, limit=200).hits
        found.append(sorted(hit.card.id for hit in hits))
    assert found[0] == found[1]
