"""Deterministic demo data: decks, cards, learners with 60 days of simulated reviews.

The simulation draws recall from the FSRS retrievability of each card at review time (so
long gaps cause forgetting), and each learner reports confidence with a known bias: ``ada``
is well calibrated, ``ben`` over-confident, ``cleo`` under-confident. A few deliberately bad
cards (duplicates, empty backs, ambiguous clozes) are left for the governance agent; their
ids are in :attr:`DemoSummary.bad_cards`. The same seed gives byte-identical content tables.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from noema_graph.errors import ConfigurationError
from noema_graph.noema import demo_content as content
from noema_graph.noema.clock import to_db
from noema_graph.noema.demo_catalog import BAD_CARDS, CATEGORIES, DECKS, LINKS, DemoCard, demo_cards
from noema_graph.noema.demo_simulation import DEMO_NOW, DEMO_START, LEARNERS, simulate
from noema_graph.noema.ops.cards import concept_id
from noema_graph.noema.ops.common import tags_json
from noema_graph.noema.ops.ingest import IngestTextInput, ingest_text
from noema_graph.noema.scheduling import (
    state_params,
)
from noema_graph.noema.sql import (
    INSERT_CARD,
    INSERT_CARD_CONCEPT,
    INSERT_CATEGORY,
    INSERT_DECK,
    INSERT_LINK,
    INSERT_REVIEW,
    INSERT_USER,
    UPSERT_STATE,
)
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.dialect import dialect_of
from noema_graph.storage.sql.driver import Op, execute, execute_many, fetch_one, insert
from noema_graph.storage.urls import redacted, sqlite_path

__all__ = ["DEMO_NOW", "DemoSummary", "write_demo_data"]


class DemoSummary(BaseModel):
    """What :func:`write_demo_data` wrote."""

    model_config = ConfigDict(frozen=True)

    path: str
    seed: int
    users: dict[str, int]
    decks: dict[str, int]
    cards: int
    reviews: int
    concepts: int
    links: int
    categories: int
    source_id: int
    chunks: int
    bad_cards: dict[str, list[int]]
    now: datetime
    seconds: float


def _write(seed: int, location: str) -> Op[dict[str, object]]:
    found = yield from fetch_one("SELECT COUNT(*) AS n FROM users")
    if found is not None and int(found["n"]) > 0:
        raise ConfigurationError(
            "path",
            f"{location!r} already holds learning data",
            fix="pass a new database, or empty this one first",
        )
    created = to_db(DEMO_START - timedelta(days=1))
    users, categories, decks = yield from _write_names(created)
    concepts: dict[str, int] = {}
    by_deck: dict[str, list[int]] = {name: [] for name in DECKS}
    for card in demo_cards():
        card_id = yield from _insert_card(card, decks, categories, concepts, created)
        by_deck[card.deck].append(card_id)
    bad: dict[str, list[int]] = {}
    for issue, card in BAD_CARDS:
        bad.setdefault(issue, []).append(
            (yield from _insert_card(card, decks, categories, concepts, created))
        )
    yield from _write_links(concepts, created)
    review_count = yield from _write_reviews(random.Random(seed), users, by_deck)
    ingested = yield from ingest_text(
        IngestTextInput(
            title=content.SOURCE_TITLE,
            text=content.SOURCE_TEXT,
            chunk_size=300,
            overlap=100,
            now=DEMO_START - timedelta(days=1),
        )
    )
    return {
        "users": users,
        "decks": decks,
        "cards": sum(map(len, by_deck.values())) + len(BAD_CARDS),
        "reviews": review_count,
        "concepts": len(concepts),
        "links": len(LINKS),
        "categories": len(categories),
        "source_id": ingested.source_id,
        "chunks": len(ingested.chunk_ids),
        "bad_cards": bad,
    }


def _write_names(created: str) -> Op[tuple[dict[str, int], dict[str, int], dict[str, int]]]:
    """Insert the learners, the category tree and the decks; return their ids by name."""
    users: dict[str, int] = {}
    for learner in LEARNERS:
        users[learner.name] = yield from insert(INSERT_USER, (learner.name, created))
    categories: dict[str, int] = {}
    for name, parent in CATEGORIES:
        parent_id = categories[parent] if parent else None
        categories[name] = yield from insert(INSERT_CATEGORY, (name, parent_id))
    decks: dict[str, int] = {}
    for name, (description, _category) in DECKS.items():
        decks[name] = yield from insert(INSERT_DECK, (name, description, created))
    return users, categories, decks


def _write_links(concepts: dict[str, int], created: str) -> Op[None]:
    """Insert the concept links, creating the concepts no card named."""
    for source, target, kind in LINKS:
        ids: list[int] = []
        for name in (source, target):
            if name not in concepts:
                concepts[name] = yield from concept_id(name, field="concept")
            ids.append(concepts[name])
        yield from execute(INSERT_LINK, (ids[0], ids[1], kind, created))


def _write_reviews(
    rng: random.Random, users: dict[str, int], by_deck: dict[str, list[int]]
) -> Op[int]:
    """Simulate each learner's reviews of their decks; insert them and the FSRS states."""
    difficulty = {cid: rng.uniform(0.7, 1.5) for ids in by_deck.values() for cid in ids}
    review_count = 0
    for learner in LEARNERS:
        order = [cid for deck in learner.decks for cid in by_deck[deck]]
        rng.shuffle(order)
        reviews, states = simulate(rng, learner, order, difficulty)
        uid = users[learner.name]
        yield from execute_many(
            INSERT_REVIEW,
            [
                (r.card_id, uid, r.rating, r.response_time_ms, r.confidence, to_db(r.at))
                for r in reviews
            ],
        )
        yield from execute_many(
            UPSERT_STATE, [state_params(uid, states[c]) for c in sorted(states)]
        )
        review_count += len(reviews)
    return review_count


def _insert_card(
    card: DemoCard,
    decks: dict[str, int],
    categories: dict[str, int],
    concepts: dict[str, int],
    created: str,
) -> Op[int]:
    card_id = yield from insert(
        INSERT_CARD,
        (
            decks[card.deck],
            categories[card.category],
            card.kind,
            card.front,
            card.back,
            tags_json(card.tags),
            created,
            created,
        ),
    )
    for name in card.concepts:
        if name not in concepts:
            concepts[name] = yield from concept_id(name, field="concept")
        yield from execute_many(INSERT_CARD_CONCEPT, [(card_id, concepts[name])])
    return card_id


def write_demo_data(path: str | Path, *, seed: int = 7) -> DemoSummary:
    """Write the demo learning data into a new SQLite file, or an empty PostgreSQL database.

    Args:
        path: A file that does not exist yet (or is empty), or a ``postgresql://`` URL of a
            database without learning data (the tables are created if missing).
        seed: Seed of the simulation; the same seed writes the same content.

    Returns:
        Counts, ids of users, decks and the deliberately bad cards, and the time taken.

    Raises:
        ConfigurationError: ``path`` already holds data.
    """
    postgres = dialect_of(path) == "postgres"
    target: str | Path = str(path) if postgres else sqlite_path(path)
    if isinstance(target, Path) and target.exists() and target.stat().st_size > 0:
        raise ConfigurationError(
            "path", f"{str(target)!r} already exists", fix="pass a new file or delete it first"
        )
    started = time.perf_counter()
    with LearningStore.open(target) as store:
        written = store.run(_write(seed, redacted(str(target))))
    return DemoSummary.model_validate(
        {
            **written,
            "path": str(target),
            "seed": seed,
            "now": DEMO_NOW,
            "seconds": round(time.perf_counter() - started, 3),
        }
    )
