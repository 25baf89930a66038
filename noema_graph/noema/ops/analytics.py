"""Learner analytics: confidence calibration and retention statistics."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field

from noema_graph.noema.calibration import (
    CalibrationFigures,
    calibration,
    is_correct,
    streak_days,
)
from noema_graph.noema.clock import as_utc, from_db, to_db, utc_now
from noema_graph.noema.ops.common import OpInput, OpResult, OptionalTime, require_user
from noema_graph.storage.sql.driver import Op, fetch_all, fetch_one


class CalibrationInput(OpInput):
    """Arguments of :func:`compute_calibration`."""

    user_id: int = Field(description="The learner.")
    since: OptionalTime = Field(default=None, description="Only reviews at or after this.")


def compute_calibration(params: CalibrationInput) -> Op[CalibrationFigures]:
    """Compare self-reported confidence with recall (Brier, ECE over 10 bins, bias)."""
    yield from require_user(params.user_id)
    since = to_db(as_utc(params.since)) if params.since else ""
    rows = yield from fetch_all(
        "SELECT confidence, rating FROM reviews WHERE user_id = ? AND confidence IS NOT NULL"
        " AND reviewed_at >= ? ORDER BY id",
        (params.user_id, since),
    )
    return calibration([(float(r["confidence"]), is_correct(r["rating"])) for r in rows])


class LearningStatsInput(OpInput):
    """Arguments of :func:`learning_stats`."""

    user_id: int = Field(description="The learner.")
    now: OptionalTime = Field(default=None, description="Reference time; defaults to now.")
    window_days: int = Field(default=30, ge=1, le=3650, description="Days for the daily rate.")


class LearningStats(OpResult):
    """A learner's progress."""

    total_reviews: int
    cards_studied: int
    retention: float | None = Field(
        description="Share of repeat reviews recalled (first sight of a card excluded)."
    )
    lapses: int = Field(description="Forgotten after graduating (Again on a Review card).")
    streak_days: int = Field(description="Consecutive UTC days with a review, up to now.")
    reviews_per_day: float = Field(description="Reviews in the window divided by its days.")
    due_now: int
    mean_response_time_ms: float | None


def learning_stats(params: LearningStatsInput) -> Op[LearningStats]:
    """Summarise a learner's retention, lapses, streak and study rate."""
    yield from require_user(params.user_id)
    now = as_utc(params.now) if params.now else utc_now()
    rows = yield from fetch_all(
        "SELECT card_id, rating, response_time_ms, reviewed_at FROM reviews"
        " WHERE user_id = ? AND reviewed_at <= ? ORDER BY reviewed_at, id",
        (params.user_id, to_db(now)),
    )
    seen: set[int] = set()
    repeats = recalled = 0
    for row in rows:
        if row["card_id"] in seen:
            repeats += 1
            recalled += is_correct(row["rating"])
        seen.add(row["card_id"])
    days = {from_db(row["reviewed_at"]).date() for row in rows}
    window_start = to_db(now - timedelta(days=params.window_days))
    in_window = sum(1 for row in rows if row["reviewed_at"] > window_start)
    states = yield from fetch_one(
        "SELECT COUNT(*) AS n, COALESCE(SUM(lapses), 0) AS lapses,"
        " COALESCE(SUM(CASE WHEN due <= ? THEN 1 ELSE 0 END), 0) AS due"
        " FROM card_states WHERE user_id = ?",
        (to_db(now), params.user_id),
    )
    assert states is not None
    times = [row["response_time_ms"] for row in rows]
    return LearningStats(
        total_reviews=len(rows),
        cards_studied=int(states["n"]),
        retention=recalled / repeats if repeats else None,
        lapses=int(states["lapses"]),
        streak_days=streak_days(days, now.date()),
        reviews_per_day=round(in_window / params.window_days, 3),
        due_now=int(states["due"]),
        mean_response_time_ms=sum(times) / len(times) if times else None,
    )
