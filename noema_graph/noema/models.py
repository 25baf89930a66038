"""Pydantic models of the store's rows, and the value types they use."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.noema.clock import from_db
from noema_graph.storage.sql.driver import Row as DbRow

CardKind = Literal["atomic", "cloze", "image_occlusion"]
LinkKind = Literal["prerequisite_of", "related_to", "part_of", "contrasts_with"]
Severity = Literal["low", "medium", "high"]
LearningState = Literal["new", "learning", "review", "relearning"]

FSRS_STATE_NAMES: dict[int, LearningState] = {1: "learning", 2: "review", 3: "relearning"}
"""``fsrs.State`` values as stored in ``card_states.state``."""


class Row(BaseModel):
    """Base of every row model: immutable, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def from_row(cls, row: DbRow, **decoded: object) -> Self:
        """Build the model from the row's columns of the same names; ``decoded`` wins.

        Columns the model has no field for are ignored; ``decoded`` carries the values that
        are stored encoded (timestamps, JSON, state numbers).
        """
        columns = {key: value for key, value in dict(row).items() if key in cls.model_fields}
        return cls.model_validate({**columns, **decoded})


class User(Row):
    """A learner."""

    id: int
    name: str
    created_at: datetime


class Deck(Row):
    """A named collection of cards."""

    id: int
    name: str
    description: str
    created_at: datetime


class Card(Row):
    """A flashcard."""

    id: int
    deck_id: int
    category_id: int | None
    kind: CardKind
    front: str
    back: str
    tags: tuple[str, ...] = ()
    concepts: tuple[str, ...] = Field(default=(), description="Names of linked concepts.")
    created_at: datetime
    updated_at: datetime


class Review(Row):
    """One answer to one card."""

    id: int
    card_id: int
    user_id: int
    rating: int = Field(ge=1, le=4, description="1 Again, 2 Hard, 3 Good, 4 Easy.")
    response_time_ms: int
    confidence: float | None = Field(description="Self-reported probability of being right.")
    reviewed_at: datetime


class CardState(Row):
    """The FSRS scheduling state of one card for one user."""

    user_id: int
    card_id: int
    state: LearningState
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime | None
    reps: int
    lapses: int


class Concept(Row):
    """A node of the knowledge graph."""

    id: int
    name: str
    description: str


class ConceptLink(Row):
    """A typed, directed edge of the knowledge graph (by concept name)."""

    id: int
    source: str
    target: str
    kind: LinkKind


class Category(Row):
    """A node of the taxonomy tree."""

    id: int
    name: str
    parent_id: int | None
    path: str = Field(description="Names from the root, joined by ' / '.")
    depth: int
    card_count: int


class Source(Row):
    """An ingested document."""

    id: int
    title: str
    content_sha256: str
    char_count: int
    chunk_size: int
    overlap: int
    created_at: datetime


class Chunk(Row):
    """A slice of a source, with its character span in the original text."""

    id: int
    source_id: int
    position: int
    start_char: int
    end_char: int
    text: str


class CardFlag(Row):
    """A quality flag raised on a card."""

    id: int
    card_id: int
    reason: str
    severity: Severity
    created_at: datetime


def card_from_row(row: DbRow, concepts: tuple[str, ...] = ()) -> Card:
    """Build a :class:`Card` from a ``cards`` row."""
    return Card.from_row(
        row,
        tags=tuple(json.loads(row["tags"])),
        concepts=concepts,
        created_at=from_db(row["created_at"]),
        updated_at=from_db(row["updated_at"]),
    )


def review_from_row(row: DbRow) -> Review:
    """Build a :class:`Review` from a ``reviews`` row."""
    return Review.from_row(row, reviewed_at=from_db(row["reviewed_at"]))


def state_from_row(row: DbRow) -> CardState:
    """Build a :class:`CardState` from a ``card_states`` row."""
    last = row["last_review"]
    return CardState.from_row(
        row,
        state=FSRS_STATE_NAMES[row["state"]],
        due=from_db(row["due"]),
        last_review=from_db(last) if last is not None else None,
    )
