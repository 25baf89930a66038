"""Card operations: read, create (all-or-nothing), update, flag, move, search, categories."""

from __future__ import annotations

import re

from pydantic import Field

from noema_graph.noema.clock import as_utc, to_db, utc_now
from noema_graph.noema.content import validate_card_text
from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.models import Card, CardFlag, CardKind, Category, Severity
from noema_graph.noema.ops.common import (
    OpInput,
    OpResult,
    OptionalTime,
    load_cards,
    require_card_row,
    require_category,
    require_deck,
    tags_json,
)
from noema_graph.noema.schema import CARD_SEARCH_TEXT
from noema_graph.noema.sql import INSERT_CARD, INSERT_CARD_CONCEPT, INSERT_CONCEPT
from noema_graph.storage.sql.driver import Op, execute, fetch_all, fetch_one, insert

_WORD = re.compile(r"\w+", re.UNICODE)


class GetCardInput(OpInput):
    """Arguments of :func:`get_card`."""

    card_id: int = Field(description="Id of the card.")


def get_card(params: GetCardInput) -> Op[Card]:
    """Return one card with its tags and concepts."""
    row = yield from require_card_row(params.card_id)
    cards = yield from load_cards([row])
    return cards[0]


class NewCard(OpInput):
    """One card to create."""

    kind: CardKind = Field(default="atomic", description="atomic, cloze or image_occlusion.")
    front: str = Field(description="Question or prompt; a cloze hides answers as {{c1::...}}.")
    back: str = Field(description="Answer (for a cloze: the full sentence or extra context).")
    tags: list[str] = Field(default_factory=list, description="Free-form tags.")
    concepts: list[str] = Field(
        default_factory=list, description="Concept names; unknown ones are created."
    )
    category_id: int | None = Field(default=None, description="Taxonomy category id.")


class CreateCardsInput(OpInput):
    """Arguments of :func:`create_cards`."""

    deck_id: int = Field(description="Deck to add the cards to.")
    cards: list[NewCard] = Field(min_length=1, max_length=500, description="Cards to create.")
    now: OptionalTime = Field(default=None, description="Creation time; defaults to now.")


class CreatedCards(OpResult):
    """Ids of the new cards, in input order."""

    card_ids: list[int]


def concept_id(name: str, *, field: str) -> Op[int]:
    """Return the id of concept ``name`` (case-insensitive), creating it when missing."""
    clean = name.strip()
    if not clean:
        raise ToolInputError(field, "concept name is empty", fix="give a non-empty name")
    row = yield from fetch_one("SELECT id FROM concepts WHERE lower(name) = lower(?)", (clean,))
    if row is not None:
        return int(row["id"])
    return (yield from insert(INSERT_CONCEPT, (clean, "")))


def create_cards(params: CreateCardsInput) -> Op[CreatedCards]:
    """Validate every card, then insert them all; any error leaves nothing written."""
    yield from require_deck(params.deck_id)
    for index, card in enumerate(params.cards):
        validate_card_text(card.kind, card.front, card.back, field=f"cards[{index}]")
        if card.category_id is not None:
            yield from require_category(card.category_id, f"cards[{index}].category_id")
    stamp = to_db(as_utc(params.now) if params.now else utc_now())
    ids: list[int] = []
    for index, card in enumerate(params.cards):
        values = (
            params.deck_id,
            card.category_id,
            card.kind,
            card.front.strip(),
            card.back.strip(),
            tags_json(card.tags),
            stamp,
            stamp,
        )
        card_id = yield from insert(INSERT_CARD, values)
        for name in card.concepts:
            cid = yield from concept_id(name, field=f"cards[{index}].concepts")
            yield from execute(INSERT_CARD_CONCEPT, (card_id, cid))
        ids.append(card_id)
    return CreatedCards(card_ids=ids)


class UpdateCardInput(OpInput):
    """Arguments of :func:`update_card`; fields left out keep their value."""

    card_id: int = Field(description="Id of the card.")
    kind: CardKind | None = Field(default=None, description="New kind.")
    front: str | None = Field(default=None, description="New front.")
    back: str | None = Field(default=None, description="New back.")
    tags: list[str] | None = Field(default=None, description="New tags (replace the old).")
    now: OptionalTime = Field(default=None, description="Update time; defaults to now.")


def update_card(params: UpdateCardInput) -> Op[Card]:
    """Change a card's kind, text or tags, validated like a new card; return the card."""
    row = yield from require_card_row(params.card_id)
    kind: CardKind = params.kind or row["kind"]
    front = params.front if params.front is not None else row["front"]
    back = params.back if params.back is not None else row["back"]
    validate_card_text(kind, front, back, field="card")
    tags = tags_json(params.tags) if params.tags is not None else row["tags"]
    stamp = to_db(as_utc(params.now) if params.now else utc_now())
    yield from execute(
        "UPDATE cards SET kind = ?, front = ?, back = ?, tags = ?, updated_at = ? WHERE id = ?",
        (kind, front.strip(), back.strip(), tags, stamp, params.card_id),
    )
    updated = yield from require_card_row(params.card_id)
    cards = yield from load_cards([updated])
    return cards[0]


class FlagCardInput(OpInput):
    """Arguments of :func:`flag_card`."""

    card_id: int = Field(description="Id of the card.")
    reason: str = Field(min_length=1, max_length=500, description="What is wrong.")
    severity: Severity = Field(default="medium", description="low, medium or high.")
    now: OptionalTime = Field(default=None, description="Flag time; defaults to now.")


def flag_card(params: FlagCardInput) -> Op[CardFlag]:
    """Raise a quality flag; flagging the same reason again only updates its severity."""
    yield from require_card_row(params.card_id)
    reason = params.reason.strip()
    if not reason:
        raise ToolInputError("reason", "is blank", fix="say what is wrong with the card")
    stamp = to_db(as_utc(params.now) if params.now else utc_now())
    yield from execute(
        "INSERT INTO card_flags (card_id, reason, severity, created_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (card_id, reason) DO UPDATE SET severity = excluded.severity",
        (params.card_id, reason, params.severity, stamp),
    )
    row = yield from fetch_one(
        "SELECT * FROM card_flags WHERE card_id = ? AND reason = ?", (params.card_id, reason)
    )
    assert row is not None
    return CardFlag.model_validate(dict(row))


class MoveCardInput(OpInput):
    """Arguments of :func:`move_card`."""

    card_id: int = Field(description="Id of the card.")
    category_id: int | None = Field(description="Target category id, or null to uncategorise.")


def move_card(params: MoveCardInput) -> Op[Card]:
    """Put a card in a taxonomy category; return the card."""
    yield from require_card_row(params.card_id)
    if params.category_id is not None:
        yield from require_category(params.category_id)
    yield from execute(
        "UPDATE cards SET category_id = ? WHERE id = ?", (params.category_id, params.card_id)
    )
    return (yield from get_card(GetCardInput(card_id=params.card_id)))


class SearchCardsInput(OpInput):
    """Arguments of :func:`search_cards`."""

    query: str = Field(min_length=1, max_length=500, description="Words to find (all must match).")
    deck_id: int | None = Field(default=None, description="Only this deck.")
    limit: int = Field(default=20, ge=1, le=200, description="Most hits to return.")


class SearchHit(OpResult):
    """One search result, best first."""

    card: Card
    score: float = Field(
        description="Relevance (BM25 on SQLite, ts_rank on PostgreSQL); larger is better."
    )


class SearchResult(OpResult):
    """Cards matching a query."""

    hits: list[SearchHit]


def fts_query(text: str, *, field: str = "query") -> str:
    """Turn free text into a safe FTS5 query: every word quoted, all required."""
    words = _WORD.findall(text)
    if not words:
        raise ToolInputError(field, f"{text!r} has no searchable words", fix="use plain words")
    return " ".join(f'"{word}"' for word in words)


_SEARCH = (
    "SELECT c.*, bm25(cards_fts) AS rank FROM cards_fts JOIN cards c ON c.id = cards_fts.rowid"
    " WHERE cards_fts MATCH ?"
)
_POSTGRES_SEARCH = (  # every word required (plainto_tsquery ANDs them); rank: lower is better
    f"SELECT c.*, -ts_rank({CARD_SEARCH_TEXT}, q) AS rank"
    f" FROM cards c, plainto_tsquery('simple', ?) q WHERE {CARD_SEARCH_TEXT} @@ q"
)


def search_cards(params: SearchCardsInput) -> Op[SearchResult]:
    """Full-text search over front, back and tags (SQLite: FTS5 and BM25; PostgreSQL: ts_rank)."""
    match = fts_query(params.query)
    where = ""
    args: list[object] = [match]
    if params.deck_id is not None:
        where = " AND c.deck_id = ?"
        args.append(params.deck_id)
    tail = where + " ORDER BY rank, c.id LIMIT ?"
    rows = yield from fetch_all(
        _SEARCH + tail, [*args, params.limit], postgres=_POSTGRES_SEARCH + tail
    )
    cards = yield from load_cards(rows)
    hits = [
        SearchHit(card=card, score=-float(row["rank"]))
        for card, row in zip(cards, rows, strict=True)
    ]
    return SearchResult(hits=hits)


class ListCategoriesInput(OpInput):
    """Arguments of :func:`list_categories` (none)."""


class CategoryTree(OpResult):
    """Every category, depth-first in name order."""

    categories: list[Category]


_TREE = """WITH RECURSIVE tree(id, name, parent_id, path, depth, sort_key) AS (
    SELECT id, name, parent_id, name, 0, name FROM categories WHERE parent_id IS NULL
    UNION ALL
    SELECT c.id, c.name, c.parent_id, tree.path || ' / ' || c.name, tree.depth + 1,
           tree.sort_key || ? || c.name
    FROM categories c JOIN tree ON c.parent_id = tree.id
)
SELECT tree.id, tree.name, tree.parent_id, tree.path, tree.depth,
       (SELECT COUNT(*) FROM cards WHERE cards.category_id = tree.id) AS card_count
FROM tree ORDER BY tree.sort_key"""
_KEY_SEPARATOR = "\x1f"  # sorts below every printable character, so parents come first


def list_categories(params: ListCategoriesInput) -> Op[CategoryTree]:
    """Return the taxonomy tree with each category's path, depth and card count."""
    del params
    rows = yield from fetch_all(_TREE, (_KEY_SEPARATOR,))
    return CategoryTree(categories=[Category.model_validate(dict(row)) for row in rows])
