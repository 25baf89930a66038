"""Helpers shared by the operation modules: input base model and existence checks."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from noema_graph.noema.errors import RecordNotFound
from noema_graph.noema.models import Card, card_from_row
from noema_graph.storage.sql.driver import Op, Row, fetch_all, fetch_one


class OpInput(BaseModel):
    """Base of operation inputs: frozen, unknown arguments rejected (they become tool schemas)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def blank_is_none(value: object) -> object:
    """Read a blank string as "not given": models often send ``""`` for an optional time."""
    return None if isinstance(value, str) and not value.strip() else value


OptionalTime = Annotated[datetime | None, BeforeValidator(blank_is_none)]
"""An optional time argument; a blank string means the same as leaving it out."""


class OpResult(BaseModel):
    """Base of operation results."""

    model_config = ConfigDict(frozen=True)


_SINGULAR = {"users": "user", "decks": "deck", "categories": "category", "cards": "card"}


def _require(
    table: str, row_id: int, field: str, hint: str, fix_call: dict[str, Any] | None = None
) -> Op[Row]:
    row = yield from fetch_one(
        f"SELECT * FROM {table} WHERE id = ?", (row_id,)
    )  # table: a constant
    if row is None:
        record = _SINGULAR.get(table, table)
        raise RecordNotFound(
            field,
            f"no {record} with id {row_id}",
            fix=hint,
            fix_call=fix_call,
            plain=f"There is no {record} {row_id}.",
        )
    return row


def require_user(user_id: int, field: str = "user_id") -> Op[Row]:
    """Return the user row or raise :class:`RecordNotFound` naming ``field``."""
    return (yield from _require("users", user_id, field, "use the id of an existing user"))


def require_deck(deck_id: int, field: str = "deck_id") -> Op[Row]:
    """Return the deck row or raise :class:`RecordNotFound` naming ``field``."""
    return (yield from _require("decks", deck_id, field, "use the id of an existing deck"))


def require_category(category_id: int, field: str = "category_id") -> Op[Row]:
    """Return the category row or raise :class:`RecordNotFound` naming ``field``."""
    hint = "call list_categories for valid ids"
    fix_call = {"tool": "list_categories", "args": {}}
    return (yield from _require("categories", category_id, field, hint, fix_call))


def require_card_row(card_id: int, field: str = "card_id") -> Op[Row]:
    """Return the card row or raise :class:`RecordNotFound` naming ``field``."""
    hint = "search_cards or list_due_cards return valid ids"
    return (yield from _require("cards", card_id, field, hint))


def concepts_of(card_ids: Iterable[int]) -> Op[dict[int, tuple[str, ...]]]:
    """Return the concept names of each card, sorted by name."""
    ids = list(card_ids)
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    rows = yield from fetch_all(
        "SELECT cc.card_id, c.name FROM card_concepts cc JOIN concepts c ON c.id = cc.concept_id"
        f" WHERE cc.card_id IN ({marks}) ORDER BY lower(c.name)",  # only placeholders
        ids,
    )
    found: dict[int, list[str]] = {}
    for row in rows:
        found.setdefault(row["card_id"], []).append(row["name"])
    return {card_id: tuple(names) for card_id, names in found.items()}


def load_cards(rows: list[Row]) -> Op[list[Card]]:
    """Turn ``cards`` rows into :class:`Card` models, with their concepts."""
    concepts = yield from concepts_of(row["id"] for row in rows)
    return [card_from_row(row, concepts.get(row["id"], ())) for row in rows]


def tags_json(tags: Iterable[str]) -> str:
    """Return tags as the stored JSON list (trimmed, de-duplicated, order kept)."""
    return json.dumps(list(dict.fromkeys(t.strip() for t in tags if t.strip())))
