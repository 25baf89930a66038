from __future__ import annotations

from datetime import date, timedelta

import pytest

from noema_graph.noema.calibration import BIAS_MARGIN, calibration, direction_of, streak_days
from noema_graph.noema.errors import RecordNotFound
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import fetch_all
from tests.noema.conftest import T0


def test_brier_of_known_pairs() -> None:
    figures = calibration([(0.9, True), (0.8, False), (0.5, True), (1.0, True)])
    # (0.1^2 + 0.8^2 + 0.5^2 + 0^2) / 4 = (0.01 + 0.64 + 0.25) / 4
    assert figures.brier == pytest.approx(0.225)
    assert figures.accuracy == pytest.approx(0.75)
    assert figures.mean_confidence == pytest.approx(0.8)
    assert figures.bias == pytest.approx(0.05)
    assert figures.count == 4
    assert figures.direction == "well calibrated"  # 0.05 is on the margin, not past it


@pytest.mark.parametrize(
    ("bias", "direction"),
    [
        (0.119, "over-confident"),
        (BIAS_MARGIN + 0.001, "over-confident"),
        (BIAS_MARGIN, "well calibrated"),
        (-0.011, "well calibrated"),
        (-BIAS_MARGIN, "well calibrated"),
        (-0.234, "under-confident"),
    ],
)
def test_direction_names_the_side_of_the_margin(bias: float, direction: str) -> None:
    assert direction_of(bias) == direction


def test_ece_by_hand() -> None:
    pairs = [(0.95, True), (0.95, False), (0.15, False), (0.15, False)]
    figures = calibration(pairs)
    # bin 9: conf 0.95, acc 0.5 -> gap 0.45, weight 1/2; bin 1: conf 0.15, acc 0 -> 0.15, 1/2
    assert figures.ece == pytest.approx(0.5 * 0.45 + 0.5 * 0.15)
    assert [b.count for b in figures.bins] == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert figures.bins[9].upper == 1.0


def test_perfect_and_empty_calibration() -> None:
    perfect = calibration([(1.0, True), (0.0, False)])
    assert perfect.brier == 0 and perfect.ece == 0 and perfect.bias == 0
    empty = calibration([])
    assert empty.count == 0 and empty.brier is None and len(empty.bins) == 10
    assert empty.direction is None
    assert calibration([(0.2, True), (0.3, True)]).direction == "under-confident"


def test_streak_counts_back_from_today_or_yesterday() -> None:
    today = date(2025, 1, 10)
    days = {date(2025, 1, d) for d in (5, 7, 8, 9)}
    assert streak_days(days, today) == 3
    assert streak_days(days | {today}, today) == 4
    assert streak_days({date(2025, 1, 1)}, today) == 0


def test_compute_calibration_op_uses_ratings(store: LearningStore) -> None:
    ids = store.call(
        "create_cards", deck_id=1, now=T0, cards=[{"front": f"Q{i}", "back": "A"} for i in range(3)]
    ).card_ids
    answers = [(ids[0], 3, 0.9), (ids[1], 1, 0.8), (ids[2], 2, 0.5)]
    for i, (card, rating, conf) in enumerate(answers):
        store.call(
            "record_review",
            user_id=1,
            card_id=card,
            rating=rating,
            response_time_ms=1,
            confidence=conf,
            reviewed_at=T0 + timedelta(minutes=i),
        )
    store.call(
        "record_review",
        user_id=1,
        card_id=ids[0],
        rating=3,
        response_time_ms=1,
        reviewed_at=T0 + timedelta(hours=1),
    )  # no confidence: ignored
    figures = store.call("compute_calibration", user_id=1)
    assert figures.count == 3
    assert figures.brier == pytest.approx((0.01 + 0.64 + 0.25) / 3)
    assert figures.bias == pytest.approx((0.9 + 0.8 + 0.5) / 3 - 2 / 3)
    later = store.call("compute_calibration", user_id=1, since=T0 + timedelta(minutes=1))
    assert later.count == 2
    with pytest.raises(RecordNotFound):
        store.call("compute_calibration", user_id=2)


def test_learning_stats(store: LearningStore) -> None:
    ids = store.call(
        "create_cards", deck_id=1, now=T0, cards=[{"front": f"Q{i}", "back": "A"} for i in range(2)]
    ).card_ids
    plan = [(0, ids[0], 3), (0, ids[1], 3), (1, ids[0], 1), (2, ids[1], 3), (2, ids[0], 3)]
    for day, card, rating in plan:
        store.call(
            "record_review",
            user_id=1,
            card_id=card,
            rating=rating,
            response_time_ms=1000,
            reviewed_at=T0 + timedelta(days=day, hours=1 + len(str(card))),
        )
    stats = store.call(
        "learning_stats", user_id=1, now=T0 + timedelta(days=2, hours=5), window_days=10
    )
    assert stats.total_reviews == 5 and stats.cards_studied == 2
    assert stats.retention == pytest.approx(2 / 3)  # repeats: Again, Good, Good
    assert stats.streak_days == 3
    assert stats.reviews_per_day == 0.5
    assert stats.mean_response_time_ms == 1000
    assert stats.lapses == 0  # the Again hit a learning card, not a graduated one


def test_learning_stats_on_demo(demo_store: LearningStore) -> None:
    from noema_graph.noema.demo import DEMO_NOW

    stats = demo_store.call("learning_stats", user_id=1, now=DEMO_NOW)
    assert stats.total_reviews > 1000
    assert 0.7 < (stats.retention or 0) < 0.95
    assert stats.lapses > 0 and stats.reviews_per_day > 5


def test_a_blank_optional_time_means_not_given(demo_store: LearningStore) -> None:
    # small models send "" for optional arguments; it must not fail or filter anything
    users = demo_store.run(fetch_all("SELECT id FROM users ORDER BY id LIMIT 1"), write=False)
    user_id = int(users[0]["id"])
    blank = demo_store.call("compute_calibration", user_id=user_id, since="")
    assert blank == demo_store.call("compute_calibration", user_id=user_id)
    assert blank.count > 0
