from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from fsrs import State

from noema_graph.errors import ConfigurationError
from noema_graph.noema.demo import DEMO_NOW, DemoSummary, write_demo_data
from noema_graph.noema.demo_simulation import recall_probability
from noema_graph.noema.scheduling import new_card, review
from noema_graph.noema.sql import CONTENT_TABLES
from noema_graph.noema.store import LearningStore
from tests.noema.conftest import T0


def _count(path: str, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        lines = [
            line
            for line in conn.iterdump()
            if any(line.startswith(f'INSERT INTO "{t}"') for t in CONTENT_TABLES)
        ]
    finally:
        conn.close()
    return lines


def test_demo_counts(demo: DemoSummary) -> None:
    assert len(demo.decks) >= 3
    assert len(demo.users) >= 2
    assert demo.cards >= 150
    assert demo.reviews >= 2000
    assert demo.chunks >= 2
    assert demo.concepts >= 10 and demo.links >= 10
    for table, expected in [
        ("cards", demo.cards),
        ("reviews", demo.reviews),
        ("users", len(demo.users)),
        ("decks", len(demo.decks)),
        ("concept_links", demo.links),
        ("chunks", demo.chunks),
        ("categories", demo.categories),
    ]:
        assert _count(demo.path, table) == expected


def test_reviews_span_sixty_days(demo: DemoSummary) -> None:
    conn = sqlite3.connect(demo.path)
    try:
        first, last = conn.execute(
            "SELECT MIN(reviewed_at), MAX(reviewed_at) FROM reviews"
        ).fetchone()
        per_user = conn.execute("SELECT COUNT(*) FROM reviews GROUP BY user_id").fetchall()
    finally:
        conn.close()
    assert first.startswith("2025-03-01")
    assert last.startswith("2025-04-2") and last < DEMO_NOW.isoformat()
    assert all(n > 500 for (n,) in per_user)


def test_simulated_recall_falls_with_elapsed_days() -> None:
    card = new_card(1, T0)
    for _ in range(3):
        card = review(card, 3, card.card.due)
    assert card.card.state == State.Review
    probabilities = [
        recall_probability(card, card.card.due + timedelta(days=d), 1.0, 1.0) for d in (0, 10, 60)
    ]
    assert probabilities == sorted(probabilities, reverse=True)
    assert probabilities[0] > 0.85 > probabilities[-1]
    harder = recall_probability(card, card.card.due + timedelta(days=10), 1.4, 1.0)
    assert harder < probabilities[1]


def test_confidence_bias_per_learner(demo: DemoSummary, demo_store: LearningStore) -> None:
    ada = demo_store.call("compute_calibration", user_id=demo.users["ada"])
    ben = demo_store.call("compute_calibration", user_id=demo.users["ben"])
    cleo = demo_store.call("compute_calibration", user_id=demo.users["cleo"])
    assert abs(ada.bias) < 0.05 and ada.ece < 0.1
    assert ben.bias > 0.08
    assert cleo.bias < -0.1
    assert ben.ece > ada.ece and cleo.ece > ada.ece


def test_same_seed_gives_identical_content(tmp_path: Path) -> None:
    a = write_demo_data(tmp_path / "a.db", seed=3)
    b = write_demo_data(tmp_path / "b.db", seed=3)
    write_demo_data(tmp_path / "c.db", seed=4)
    assert _dump(tmp_path / "a.db") == _dump(tmp_path / "b.db")
    assert _dump(tmp_path / "a.db") != _dump(tmp_path / "c.db")
    assert a.model_dump(exclude={"path", "seconds"}) == b.model_dump(exclude={"path", "seconds"})


def test_refuses_to_overwrite_an_existing_database(demo: DemoSummary) -> None:
    with pytest.raises(ConfigurationError, match="path") as info:
        write_demo_data(demo.path)
    assert info.value.fix is not None
