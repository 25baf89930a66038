"""Review operations: what is due, history, recording an answer, previewing schedules."""

from __future__ import annotations

from datetime import datetime

from fsrs import Rating
from pydantic import Field

from noema_graph.noema.clock import as_utc, to_db, utc_now
from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.models import (
    FSRS_STATE_NAMES,
    Card,
    CardState,
    LearningState,
    Review,
    review_from_row,
    state_from_row,
)
from noema_graph.noema.ops.common import (
    OpInput,
    OpResult,
    OptionalTime,
    load_cards,
    require_card_row,
    require_deck,
    require_user,
)
from noema_graph.noema.scheduling import (
    ScheduledCard,
    from_state_row,
    new_card,
    retrievability,
    review,
    state_params,
)
from noema_graph.noema.sql import INSERT_REVIEW, UPSERT_STATE
from noema_graph.storage.sql.driver import Op, execute, fetch_all, fetch_one, insert


class ListDueCardsInput(OpInput):
    """Arguments of :func:`list_due_cards`."""

    user_id: int = Field(description="The learner.")
    deck_id: int | None = Field(default=None, description="Only this deck.")
    now: OptionalTime = Field(default=None, description="Reference time; defaults to now.")
    limit: int = Field(default=20, ge=1, le=500, description="Most cards to return.")
    include_new: bool = Field(default=True, description="Fill up with never-seen cards.")


class DueCard(OpResult):
    """A card to study now."""

    card: Card
    state: LearningState
    due: datetime | None = Field(description="When it fell due; null for a new card.")
    retrievability: float = Field(description="FSRS recall probability now (0 when new).")


class DueCards(OpResult):
    """Due cards, most overdue first, then new cards in creation order."""

    cards: list[DueCard]
    due_total: int = Field(description="All due (non-new) cards, beyond the limit too.")


def list_due_cards(params: ListDueCardsInput) -> Op[DueCards]:
    """Return the cards a learner should study now."""
    yield from require_user(params.user_id)
    if params.deck_id is not None:
        yield from require_deck(params.deck_id)
    now = as_utc(params.now) if params.now else utc_now()
    deck_sql = " AND c.deck_id = :deck" if params.deck_id is not None else ""
    args = {
        "user": params.user_id,
        "now": to_db(now),
        "deck": params.deck_id,
        "limit": params.limit,
    }
    due_rows = yield from fetch_all(
        "SELECT c.*, s.* FROM card_states s JOIN cards c ON c.id = s.card_id"
        f" WHERE s.user_id = :user AND s.due <= :now{deck_sql}"
        " ORDER BY s.due, c.id LIMIT :limit",
        args,
    )
    total = yield from fetch_one(
        "SELECT COUNT(*) AS n FROM card_states s JOIN cards c ON c.id = s.card_id"
        f" WHERE s.user_id = :user AND s.due <= :now{deck_sql}",
        args,
    )
    out: list[DueCard] = []
    for row, card in zip(due_rows, (yield from load_cards(due_rows)), strict=True):
        state = state_from_row(row)
        out.append(
            DueCard(
                card=card,
                state=state.state,
                due=state.due,
                retrievability=retrievability(from_state_row(row), now),
            )
        )
    room = params.limit - len(due_rows)
    if params.include_new and room > 0:
        new_rows = yield from fetch_all(
            "SELECT c.* FROM cards c WHERE NOT EXISTS (SELECT 1 FROM card_states s"
            f" WHERE s.card_id = c.id AND s.user_id = :user){deck_sql} ORDER BY c.id LIMIT :room",
            {**args, "room": room},
        )
        fresh = yield from load_cards(new_rows)
        out.extend(DueCard(card=c, state="new", due=None, retrievability=0.0) for c in fresh)
    return DueCards(cards=out, due_total=int(total["n"]) if total else 0)


class ReviewHistoryInput(OpInput):
    """Arguments of :func:`get_review_history`."""

    user_id: int = Field(description="The learner.")
    card_id: int | None = Field(default=None, description="Only this card.")
    limit: int = Field(default=50, ge=1, le=5000, description="Most reviews to return.")


class ReviewHistory(OpResult):
    """Reviews, newest first."""

    reviews: list[Review]


def get_review_history(params: ReviewHistoryInput) -> Op[ReviewHistory]:
    """Return a learner's reviews, optionally of one card."""
    yield from require_user(params.user_id)
    sql = "SELECT * FROM reviews WHERE user_id = ?"
    args: list[object] = [params.user_id]
    if params.card_id is not None:
        yield from require_card_row(params.card_id)
        sql += " AND card_id = ?"
        args.append(params.card_id)
    rows = yield from fetch_all(
        sql + " ORDER BY reviewed_at DESC, id DESC LIMIT ?", [*args, params.limit]
    )
    return ReviewHistory(reviews=[review_from_row(row) for row in rows])


def _load_state(user_id: int, card_id: int, now: datetime) -> Op[ScheduledCard]:
    row = yield from fetch_one(
        "SELECT * FROM card_states WHERE user_id = ? AND card_id = ?", (user_id, card_id)
    )
    return from_state_row(row) if row is not None else new_card(card_id, now)


class RecordReviewInput(OpInput):
    """Arguments of :func:`record_review`."""

    user_id: int = Field(description="The learner.")
    card_id: int = Field(description="The card answered.")
    rating: int = Field(ge=1, le=4, description="1 Again, 2 Hard, 3 Good, 4 Easy.")
    response_time_ms: int = Field(ge=0, le=3_600_000, description="Time to answer, in ms.")
    confidence: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Self-reported chance of being right, 0-1."
    )
    reviewed_at: OptionalTime = Field(default=None, description="Defaults to now.")


class ReviewOutcome(OpResult):
    """The stored review and the card's new schedule."""

    review_id: int
    retrievability_before: float = Field(description="FSRS recall probability at review time.")
    state: CardState


def record_review(params: RecordReviewInput) -> Op[ReviewOutcome]:
    """Store one review and advance the card's FSRS state for this learner."""
    yield from require_user(params.user_id)
    yield from require_card_row(params.card_id)
    at = as_utc(params.reviewed_at) if params.reviewed_at else utc_now()
    before = yield from _load_state(params.user_id, params.card_id, at)
    last = before.card.last_review
    if last is not None and at < last:
        raise ToolInputError(
            "reviewed_at",
            f"{to_db(at)} is before this card's last review at {to_db(last)}",
            fix="record reviews in time order",
        )
    after = review(before, params.rating, at)
    review_id = yield from insert(
        INSERT_REVIEW,
        (
            params.card_id,
            params.user_id,
            params.rating,
            params.response_time_ms,
            params.confidence,
            to_db(at),
        ),
    )
    yield from execute(UPSERT_STATE, state_params(params.user_id, after))
    row = yield from fetch_one(
        "SELECT * FROM card_states WHERE user_id = ? AND card_id = ?",
        (params.user_id, params.card_id),
    )
    assert row is not None
    return ReviewOutcome(
        review_id=review_id,
        retrievability_before=retrievability(before, at),
        state=state_from_row(row),
    )


class SchedulePreviewInput(OpInput):
    """Arguments of :func:`schedule_preview`."""

    user_id: int = Field(description="The learner.")
    card_id: int = Field(description="The card.")
    now: OptionalTime = Field(default=None, description="Answer time; defaults to now.")


class PreviewOption(OpResult):
    """Where one rating would send the card."""

    rating: int
    label: str
    due: datetime
    interval_days: float


class SchedulePreview(OpResult):
    """The next due date for each possible rating; nothing is stored."""

    state: LearningState
    options: list[PreviewOption]


def schedule_preview(params: SchedulePreviewInput) -> Op[SchedulePreview]:
    """Show when the card would next be due after each rating, without recording anything."""
    yield from require_user(params.user_id)
    yield from require_card_row(params.card_id)
    now = as_utc(params.now) if params.now else utc_now()
    current = yield from _load_state(params.user_id, params.card_id, now)
    options: list[PreviewOption] = []
    for rating in Rating:
        due = review(current, int(rating), now).card.due
        days = round((due - now).total_seconds() / 86400, 4)
        options.append(
            PreviewOption(rating=int(rating), label=rating.name, due=due, interval_days=days)
        )
    state: LearningState = "new" if current.is_new else FSRS_STATE_NAMES[int(current.card.state)]
    return SchedulePreview(state=state, options=options)
