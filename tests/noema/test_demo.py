from __future__ import annotations

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
from noema_graph.storage.sql.driver import fetch_all
from tests.noema.conftest import T0, Locate


def _rows(where: str | Path, sql: str) -> list[dict[str, object]]:
    with LearningStore.open(where) as store:
        return [dict(row) for row in store.run(fetch_all(sql), write=False)]


def _count(where: str, table: str) -> int:
    return int(str(_rows(where, f"SELECT COUNT(*) AS n FROM {table}")[0]["n"]))


def _dump(where: str | Path) -> list[list[dict[str, object]]]:
    return [_rows(where, f"SELECT * FROM {table} ORDER BY 1, 2") for table in CONTENT_TABLES]


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
    span = _rows(
        demo.path, "SELECT MIN(reviewed_at) AS first, MAX(reviewed_at) AS last FROM reviews"
    )
    per_user = _rows(demo.path, "SELECT COUNT(*) AS n FROM reviews GROUP BY user_id")
    first, last = str(span[0]["first"]), str(span[0]["last"])
    assert first.startswith("2025-03-01")
    assert last.startswith("2025-04-2") and last < DEMO_NOW.isoformat()
    assert len(per_user) == len(demo.users) and all(int(str(r["n"])) > 500 for r in per_user)


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


def test_same_seed_gives_identical_content(locate: Locate) -> None:
    a = write_demo_data(locate("a"), seed=3)
    b = write_demo_data(locate("b"), seed=3)
    c = write_demo_data(locate("c"), seed=4)
    assert _dump(a.path) == _dump(b.path)
    assert _dump(a.path) != _dump(c.path)
    assert a.model_dump(exclude={"path", "seconds"}) == b.model_dump(exclude={"path", "seconds"})


def test_refuses_to_overwrite_an_existing_database(demo: DemoSummary) -> None:
    with pytest.raises(ConfigurationError, match="path") as info:
        write_demo_data(demo.path)
    assert info.value.fix is not None
