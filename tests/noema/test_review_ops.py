from __future__ import annotations

from datetime import timedelta

import pytest

from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.store import LearningStore
from tests.noema.conftest import T0


def _cards(store: LearningStore, n: int = 3) -> list[int]:
    cards = [{"front": f"Question {i}?", "back": f"Answer {i}"} for i in range(n)]
    return store.call("create_cards", deck_id=1, cards=cards, now=T0).card_ids


def test_new_cards_are_due_and_reviews_reschedule_them(store: LearningStore) -> None:
    ids = _cards(store)
    due = store.call("list_due_cards", user_id=1, now=T0)
    assert [d.card.id for d in due.cards] == ids
    assert {d.state for d in due.cards} == {"new"} and due.due_total == 0

    outcome = store.call(
        "record_review",
        user_id=1,
        card_id=ids[0],
        rating=3,
        response_time_ms=2500,
        confidence=0.8,
        reviewed_at=T0,
    )
    assert outcome.retrievability_before == 0
    assert outcome.state.state == "learning" and outcome.state.reps == 1
    assert outcome.state.due == T0 + timedelta(minutes=10)  # second learning step
    later = store.call("list_due_cards", user_id=1, now=T0 + timedelta(minutes=11))
    assert later.cards[0].card.id == ids[0] and later.cards[0].state == "learning"
    assert later.due_total == 1
    assert [d.card.id for d in later.cards[1:]] == ids[1:]
    only_due = store.call("list_due_cards", user_id=1, now=T0, include_new=False)
    assert only_due.cards == []


def test_fsrs_state_grows_with_good_answers_and_lapses_count(store: LearningStore) -> None:
    card = _cards(store, 1)[0]
    at = T0
    for _ in range(3):
        state = store.call(
            "record_review",
            user_id=1,
            card_id=card,
            rating=3,
            response_time_ms=1000,
            reviewed_at=at,
        ).state
        at = state.due
    assert state.state == "review"
    first_interval = state.due - state.last_review
    assert first_interval >= timedelta(days=1)
    good = store.call(
        "record_review", user_id=1, card_id=card, rating=3, response_time_ms=1000, reviewed_at=at
    )
    assert good.state.stability > state.stability
    assert good.state.due - at > first_interval
    assert 0.85 < good.retrievability_before <= 1.0
    lapse = store.call(
        "record_review",
        user_id=1,
        card_id=card,
        rating=1,
        response_time_ms=1000,
        reviewed_at=good.state.due,
    )
    assert lapse.state.state == "relearning" and lapse.state.lapses == 1
    assert lapse.state.stability < good.state.stability


def test_record_review_validation_names_fields(store: LearningStore) -> None:
    card = _cards(store, 1)[0]
    for bad, field in [
        ({"rating": 5}, "rating"),
        ({"confidence": 1.5}, "confidence"),
        ({"response_time_ms": -1}, "response_time_ms"),
    ]:
        args = {"user_id": 1, "card_id": card, "rating": 3, "response_time_ms": 10} | bad
        with pytest.raises(ToolInputError) as info:
            store.call("record_review", **args)
        assert info.value.field == field
    with pytest.raises(RecordNotFound) as info:
        store.call("record_review", user_id=7, card_id=card, rating=3, response_time_ms=1)
    assert info.value.field == "user_id"
    store.call(
        "record_review", user_id=1, card_id=card, rating=3, response_time_ms=1, reviewed_at=T0
    )
    with pytest.raises(ToolInputError) as info:
        store.call(
            "record_review",
            user_id=1,
            card_id=card,
            rating=3,
            response_time_ms=1,
            reviewed_at=T0 - timedelta(days=1),
        )
    assert info.value.field == "reviewed_at"
    assert len(store.call("get_review_history", user_id=1).reviews) == 1


def test_review_history_newest_first(store: LearningStore) -> None:
    ids = _cards(store, 2)
    for i, card in enumerate([ids[0], ids[1], ids[0]]):
        store.call(
            "record_review",
            user_id=1,
            card_id=card,
            rating=3,
            response_time_ms=100 * i,
            confidence=0.5,
            reviewed_at=T0 + timedelta(minutes=20 * i),
        )
    history = store.call("get_review_history", user_id=1).reviews
    assert [r.response_time_ms for r in history] == [200, 100, 0]
    one = store.call("get_review_history", user_id=1, card_id=ids[0], limit=1).reviews
    assert len(one) == 1 and one[0].response_time_ms == 200


def test_schedule_preview_orders_ratings_and_stores_nothing(store: LearningStore) -> None:
    card = _cards(store, 1)[0]
    preview = store.call("schedule_preview", user_id=1, card_id=card, now=T0)
    assert preview.state == "new"
    assert [o.label for o in preview.options] == ["Again", "Hard", "Good", "Easy"]
    dues = [o.due for o in preview.options]
    assert dues == sorted(dues) and dues[-1] - T0 >= timedelta(days=1)
    assert store.call("get_review_history", user_id=1).reviews == []
    store.call(
        "record_review", user_id=1, card_id=card, rating=3, response_time_ms=1, reviewed_at=T0
    )
    assert store.call("schedule_preview", user_id=1, card_id=card, now=T0).state == "learning"


def test_due_cards_on_demo_data(demo_store: LearningStore) -> None:
    from noema_graph.noema.demo import DEMO_NOW

    due = demo_store.call(
        "list_due_cards", user_id=1, now=DEMO_NOW + timedelta(days=7), limit=50, include_new=False
    )
    assert due.due_total >= len(due.cards) > 10
    assert [d.due for d in due.cards] == sorted(d.due for d in due.cards)
    assert all(0 < d.retrievability <= 1 for d in due.cards)
    by_deck = demo_store.call(
        "list_due_cards", user_id=1, deck_id=3, limit=500, now=DEMO_NOW + timedelta(days=7)
    )
    assert {d.card.deck_id for d in by_deck.cards} == {3}
