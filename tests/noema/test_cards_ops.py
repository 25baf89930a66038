from __future__ import annotations

import pytest

from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.ops.cards import CreateCardsInput, NewCard, create_cards
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import execute, fetch_one
from noema_graph.storage.urls import store_errors
from tests.noema.conftest import T0


def _count(store: LearningStore, table: str) -> int:
    row = store.run(fetch_one(f"SELECT COUNT(*) AS n FROM {table}"), write=False)
    assert row is not None
    return int(row["n"])


def _make(store: LearningStore) -> list[int]:
    result = store.call(
        "create_cards",
        deck_id=1,
        now=T0,
        cards=[
            {
                "front": "What is the capital of France?",
                "back": "Paris",
                "tags": ["geo", "geo "],
                "concepts": ["Europe", "Capital cities"],
            },
            {
                "kind": "cloze",
                "front": "{{c1::Water}} boils at {{c2::100}} degrees.",
                "back": "Water boils at 100 degrees Celsius.",
                "concepts": ["europe"],
            },
        ],
    )
    return result.card_ids


def test_create_and_get_card(store: LearningStore) -> None:
    ids = _make(store)
    card = store.call("get_card", card_id=ids[0])
    assert card.front == "What is the capital of France?"
    assert card.tags == ("geo",)
    assert card.concepts == ("Capital cities", "Europe")
    assert card.created_at == T0
    assert _count(store, "concepts") == 2  # 'europe' reused case-insensitively


def test_typed_path_without_the_table(store: LearningStore) -> None:
    params = CreateCardsInput(deck_id=1, cards=[NewCard(front="2+2?", back="4")])
    assert store.run(create_cards(params)).card_ids == [1]


@pytest.mark.parametrize(
    ("card", "field"),
    [
        ({"front": "  ", "back": "x"}, "cards[1].front"),
        ({"front": "q", "back": ""}, "cards[1].back"),
        ({"kind": "cloze", "front": "No deletion here.", "back": "x"}, "cards[1].front"),
        ({"kind": "cloze", "front": "{{c1::a}} and {{c2::A}}", "back": "x"}, "cards[1].front"),
        ({"front": "q", "back": "a", "category_id": 42}, "cards[1].category_id"),
    ],
)
def test_create_cards_is_all_or_nothing(
    store: LearningStore, card: dict[str, object], field: str
) -> None:
    good = {"front": "Good?", "back": "Yes", "concepts": ["Fresh concept"]}
    with pytest.raises(ToolInputError) as info:
        store.call("create_cards", deck_id=1, cards=[good, card])
    assert info.value.field == field
    assert info.value.fix
    assert _count(store, "cards") == 0
    assert _count(store, "concepts") == 0


def test_create_cards_rejects_unknown_deck_and_bad_kind(store: LearningStore) -> None:
    with pytest.raises(RecordNotFound, match="deck_id: no deck with id 9"):
        store.call("create_cards", deck_id=9, cards=[{"front": "q", "back": "a"}])
    with pytest.raises(ToolInputError) as info:
        store.call("create_cards", deck_id=1, cards=[{"kind": "essay", "front": "q", "back": "a"}])
    assert info.value.field == "cards.0.kind"
    assert "atomic" in str(info.value)


def test_update_card_validates_and_keeps_unset_fields(store: LearningStore) -> None:
    ids = _make(store)
    card = store.call("update_card", card_id=ids[0], back="Paris (since 508 AD)", tags=["x"])
    assert card.back == "Paris (since 508 AD)"
    assert card.front == "What is the capital of France?"
    assert card.tags == ("x",)
    with pytest.raises(ToolInputError) as info:
        store.call("update_card", card_id=ids[0], kind="cloze")
    assert info.value.field == "card.front"
    assert store.call("get_card", card_id=ids[0]).kind == "atomic"


def test_flag_card_is_idempotent_per_reason(store: LearningStore) -> None:
    ids = _make(store)
    first = store.call("flag_card", card_id=ids[0], reason="ambiguous", severity="low")
    again = store.call("flag_card", card_id=ids[0], reason="ambiguous", severity="high")
    assert first.id == again.id and again.severity == "high"
    assert _count(store, "card_flags") == 1
    with pytest.raises(ToolInputError) as info:
        store.call("flag_card", card_id=ids[0], reason="x", severity="urgent")
    assert info.value.field == "severity"
    with pytest.raises(RecordNotFound) as missing:
        store.call("flag_card", card_id=999, reason="x")
    assert missing.value.field == "card_id"


def test_search_cards_ranks_and_filters(store: LearningStore) -> None:
    ids = _make(store)
    hits = store.call("search_cards", query="capital France").hits
    assert [h.card.id for h in hits] == [ids[0]]
    assert store.call("search_cards", query='water "boils"').hits[0].card.id == ids[1]
    assert store.call("search_cards", query="geo").hits[0].card.id == ids[0]  # tags indexed
    assert store.call("search_cards", query="water", deck_id=2).hits == []
    store.call(
        "update_card",
        card_id=ids[1],
        front="{{c1::Ice}} melts at {{c2::0}} degrees.",
        back="Ice melts at 0 degrees.",
    )
    assert store.call("search_cards", query="boils").hits == []  # FTS follows updates
    assert store.call("search_cards", query="melts").hits[0].card.id == ids[1]
    with pytest.raises(ToolInputError) as info:
        store.call("search_cards", query="***")
    assert info.value.field == "query"


def test_categories_tree_and_move_card(demo_store: LearningStore) -> None:
    tree = demo_store.call("list_categories").categories
    paths = [c.path for c in tree]
    assert paths[0] == "Humanities"
    assert "Science / Chemistry / Elements" in paths
    vocab = next(c for c in tree if c.name == "Vocabulary")
    assert vocab.depth == 3 and vocab.card_count > 30


def test_move_card(store: LearningStore) -> None:
    ids = _make(store)
    store.run(execute("INSERT INTO categories (name, parent_id) VALUES ('Geo', NULL)"))
    assert store.call("move_card", card_id=ids[0], category_id=1).category_id == 1
    assert store.call("list_categories").categories[0].card_count == 1
    assert store.call("move_card", card_id=ids[0], category_id=None).category_id is None
    with pytest.raises(RecordNotFound) as info:
        store.call("move_card", card_id=ids[0], category_id=5)
    assert info.value.field == "category_id"


def test_foreign_keys_are_enforced(store: LearningStore) -> None:
    insert_orphan = execute(
        "INSERT INTO cards (deck_id, kind, front, back, created_at, updated_at)"
        " VALUES (77, 'atomic', 'q', 'a', 'x', 'x')"
    )
    with pytest.raises(store_errors()) as info:
        store.run(insert_orphan)
    assert "foreign key" in str(info.value).lower()
