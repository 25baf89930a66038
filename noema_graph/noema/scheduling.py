"""FSRS glue: the stored ``card_states`` row <-> ``fsrs.Card``, and one review step."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache

from fsrs import Card as FsrsCard
from fsrs import Rating, Scheduler, State

from noema_graph.noema.clock import as_utc, from_db, to_db
from noema_graph.storage.sql.driver import Row


@cache
def default_scheduler() -> Scheduler:
    """Return the shared FSRS scheduler (default weights, 90% retention, no fuzz).

    Fuzz is off so schedules are reproducible: fsrs draws it from the global ``random``.
    """
    return Scheduler(desired_retention=0.9, enable_fuzzing=False)


@dataclass(frozen=True, slots=True)
class ScheduledCard:
    """An FSRS card plus the counters the store keeps beside it."""

    card: FsrsCard
    reps: int = 0
    lapses: int = 0

    @property
    def is_new(self) -> bool:
        """Whether the card has never been reviewed."""
        return self.card.last_review is None


def new_card(card_id: int, now: datetime) -> ScheduledCard:
    """Return the state of a never-reviewed card, due at ``now``."""
    return ScheduledCard(FsrsCard(card_id=card_id, state=State.Learning, due=as_utc(now)))


def from_state_row(row: Row) -> ScheduledCard:
    """Rebuild a :class:`ScheduledCard` from a ``card_states`` row."""
    last = row["last_review"]
    card = FsrsCard(
        card_id=row["card_id"],
        state=State(row["state"]),
        step=row["step"],
        stability=row["stability"],
        difficulty=row["difficulty"],
        due=from_db(row["due"]),
        last_review=from_db(last) if last is not None else None,
    )
    return ScheduledCard(card, reps=row["reps"], lapses=row["lapses"])


def state_params(user_id: int, scheduled: ScheduledCard) -> tuple[object, ...]:
    """Return the parameters of :data:`~noema_graph.noema.sql.UPSERT_STATE`."""
    card = scheduled.card
    last = card.last_review
    return (
        user_id,
        card.card_id,
        int(card.state),
        card.step,
        card.stability,
        card.difficulty,
        to_db(card.due),
        to_db(last) if last is not None else None,
        scheduled.reps,
        scheduled.lapses,
    )


def review(
    scheduled: ScheduledCard, rating: int, at: datetime, scheduler: Scheduler | None = None
) -> ScheduledCard:
    """Apply one review; a lapse is an Again on a card in the Review state."""
    sched = scheduler or default_scheduler()
    card, _log = sched.review_card(scheduled.card, Rating(rating), as_utc(at))
    lapsed = rating == Rating.Again and scheduled.card.state == State.Review
    return ScheduledCard(card, scheduled.reps + 1, scheduled.lapses + int(lapsed))


def retrievability(
    scheduled: ScheduledCard, at: datetime, scheduler: Scheduler | None = None
) -> float:
    """Return the predicted recall probability at ``at`` (0 for a new card)."""
    sched = scheduler or default_scheduler()
    return float(sched.get_card_retrievability(scheduled.card, as_utc(at)))
