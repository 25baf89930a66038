"""Who runs an agent: resolve a learner by name or id, and make sure there is data."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from noema_graph.errors import ConfigurationError
from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.location import shown, store_location
from noema_graph.noema.store import AsyncLearningStore, LearningStore
from noema_graph.storage.sql.connections import connect_sync
from noema_graph.storage.sql.dialect import dialect_of
from noema_graph.storage.sql.driver import Op, fetch_all, run_sync
from noema_graph.storage.sql.tables import postgres_table_exists


@dataclass(frozen=True)
class Learner:
    """A user of the learning store."""

    id: int
    name: str


def _learners() -> Op[list[Learner]]:
    rows = yield from fetch_all("SELECT id, name FROM users ORDER BY id")
    return [Learner(int(row["id"]), str(row["name"])) for row in rows]


def _pick(learners: list[Learner], user: str | int, db: str | Path) -> Learner:
    for learner in learners:
        if str(user) in (learner.name, str(learner.id)):
            return learner
    raise ConfigurationError(
        "user_id",
        f"no learner {user!r} in {shown(db)!r}",
        fix=f"use one of {[x.name for x in learners]}"
        if learners
        else "write the sample data first: noema-graph demo-data",
    )


def resolve_learner(db: str | Path, user: str | int) -> Learner:
    """Return the learner named ``user`` (or with that id) in the store at ``db``.

    Raises:
        ConfigurationError: No such learner; the message lists the known ones.
    """
    with LearningStore.open(db) as store:
        learners = store.run(_learners(), write=False)
    return _pick(learners, user, db)


async def aresolve_learner(db: str | Path, user: str | int) -> Learner:
    """Async twin of :func:`resolve_learner`."""
    async with await AsyncLearningStore.open(db) as store:
        learners = await store.run(_learners(), write=False)
    return _pick(learners, user, db)


def read_learners(db: str | Path) -> list[Learner]:
    """Return every learner in the store at ``db``; none when it is missing or not a store.

    Read-only: a missing file or table is not created (unlike :func:`resolve_learner`'s store).

    Raises:
        DatabaseUnavailable: ``db`` is a PostgreSQL URL whose server could not be reached.
    """
    if dialect_of(db) == "postgres":
        if not postgres_table_exists(str(db), "users"):
            return []
        conn = connect_sync(str(db), pooled=True)  # a server reads them per graph build
        try:
            return run_sync(conn, _learners(), write=False)
        finally:
            conn.close()
    path = Path(store_location(db))
    if not path.is_file():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT id, name FROM users ORDER BY id").fetchall()
    except sqlite3.DatabaseError:  # no users table, or not an SQLite file
        return []
    finally:
        conn.close()
    return [Learner(int(row[0]), str(row[1])) for row in rows]


def find_learner(learners: list[Learner], user: str | int, db: str | Path) -> Learner:
    """Return the learner of ``learners`` named ``user`` (or with that id).

    Raises:
        ConfigurationError: No such learner; the message names ``db`` and the known ones.
    """
    return _pick(learners, user, db)


def has_learning_tables(db: str | Path) -> bool:
    """Return whether ``db`` exists and holds the learning schema's ``cards`` table."""
    if dialect_of(db) == "postgres":
        return postgres_table_exists(str(db), "cards")
    path = Path(store_location(db))
    if not path.exists() or path.stat().st_size == 0:
        return False
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='cards'")
        return row.fetchone() is not None
    finally:
        conn.close()


def ensure_demo_data(db: str | Path) -> DemoSummary | None:
    """Write the sample data into ``db`` unless it already has learning tables.

    Returns:
        What was written, or None when the store already existed.

    Raises:
        ConfigurationError: ``db`` holds other data (the sample needs a new file).
        DatabaseUnavailable: ``db`` is a PostgreSQL URL whose server could not be reached.
    """
    if has_learning_tables(db):
        return None
    return write_demo_data(db)
