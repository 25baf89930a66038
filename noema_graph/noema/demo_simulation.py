"""Simulated learners for the demo data: FSRS-driven forgetting and biased confidence.

Recall is drawn from the FSRS retrievability of each card at review time (so long gaps cause
forgetting), sharpened by a per-card difficulty and a per-learner skill. Each learner reports
confidence with a known bias: ``ada`` well calibrated, ``ben`` over-confident, ``cleo``
under-confident.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, NamedTuple

from fsrs import State

from noema_graph.noema.scheduling import (
    ScheduledCard,
    new_card,
    retrievability,
    review,
)

DEMO_START = datetime(2025, 3, 1, tzinfo=UTC)
"""First simulated day; cards and users are created the day before."""
DEMO_DAYS = 60
DEMO_NOW = DEMO_START + timedelta(days=DEMO_DAYS)
"""The moment the demo data describes: just after the last simulated day."""

Bias = Literal["calibrated", "over", "under"]


@dataclass(frozen=True)
class Learner:
    """A simulated learner."""

    name: str
    decks: tuple[str, ...]
    new_per_day: int
    skill: float
    bias: Bias
    skip_rate: float


LEARNERS = (
    Learner(
        "ada",
        ("World Capitals", "Chemical Elements", "Spanish Vocabulary", "Cell Biology"),
        6,
        1.0,
        "calibrated",
        0.1,
    ),
    Learner(
        "ben", ("World Capitals", "Chemical Elements", "Spanish Vocabulary"), 5, 0.85, "over", 0.15
    ),
    Learner(
        "cleo", ("Chemical Elements", "Spanish Vocabulary", "Cell Biology"), 5, 1.15, "under", 0.12
    ),
)


class SimulatedReview(NamedTuple):
    """One simulated answer."""

    card_id: int
    rating: int
    response_time_ms: int
    confidence: float
    at: datetime


def _confidence(rng: random.Random, p: float, bias: Bias) -> float:
    if bias == "over":
        raw = 0.4 + 0.7 * p
    elif bias == "under":
        raw = p - 0.22
    else:
        raw = p
    return round(min(1.0, max(0.0, raw + rng.gauss(0.0, 0.1))), 2)


def _answer(rng: random.Random, p: float, bias: Bias, difficulty: float) -> tuple[int, int, float]:
    """Return (rating, response ms, confidence) for one answer with recall probability ``p``."""
    confidence = _confidence(rng, p, bias)
    if rng.random() >= p:
        return 1, int(rng.lognormvariate(math.log(7000), 0.45)), confidence
    draw = rng.random()
    if p > 0.9:
        rating = 4 if draw < 0.25 else 3 if draw < 0.9 else 2
    else:
        rating = 2 if draw < 0.3 else 3 if draw < 0.95 else 4
    ms = int(rng.lognormvariate(math.log(3200) + 0.4 * (difficulty - 1.0), 0.35))
    return rating, ms, confidence


def recall_probability(card: ScheduledCard, at: datetime, difficulty: float, skill: float) -> float:
    """FSRS retrievability, sharpened by card difficulty and learner skill."""
    if card.is_new:
        return max(0.2, 0.75 - 0.4 * (difficulty - 0.7) / 0.8) * min(1.0, skill)
    if card.card.state != State.Review:
        return 0.88 ** (difficulty / skill)  # same-day learning step
    return retrievability(card, at) ** (difficulty / skill)


def simulate(
    rng: random.Random, learner: Learner, card_ids: list[int], difficulty: dict[int, float]
) -> tuple[list[SimulatedReview], dict[int, ScheduledCard]]:
    """Simulate ``DEMO_DAYS`` days of study; return the reviews and final states."""
    unseen = list(card_ids)
    active: dict[int, ScheduledCard] = {}
    reviews: list[SimulatedReview] = []
    for day in range(DEMO_DAYS):
        if rng.random() < learner.skip_rate:
            continue
        t = DEMO_START + timedelta(days=day, hours=rng.randint(7, 21), minutes=rng.randint(0, 59))
        new_left = learner.new_per_day
        while True:
            due = [cid for cid, sc in active.items() if sc.card.due <= t]
            if due:
                cid = min(due, key=lambda c: (active[c].card.due, c))
            elif new_left and unseen:
                cid, new_left = unseen.pop(0), new_left - 1
                active[cid] = new_card(cid, t)
            else:
                soon = [
                    sc.card.due
                    for sc in active.values()
                    if sc.card.due <= t + timedelta(minutes=20)
                ]
                if not soon:
                    break
                t = min(soon)
                continue
            p = recall_probability(active[cid], t, difficulty[cid], learner.skill)
            rating, ms, confidence = _answer(rng, p, learner.bias, difficulty[cid])
            reviews.append(SimulatedReview(cid, rating, ms, confidence, t))
            active[cid] = review(active[cid], rating, t)
            t += timedelta(milliseconds=ms, seconds=rng.randint(3, 15))
            t = t.replace(microsecond=0)
    return reviews, active
