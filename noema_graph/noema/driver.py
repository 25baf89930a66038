"""Sans-IO database operations, run by a sync (sqlite3) or an async (aiosqlite) driver.

An operation is a generator that yields :class:`Statement` objects and receives an
:class:`Outcome` for each; its return value is the operation's result. The same generator
therefore runs unchanged over ``sqlite3`` (scripts, demo data) and ``aiosqlite`` (agents), and
the SQL and the domain logic exist once. Each run is one transaction: an exception anywhere
rolls everything back, so bad input never leaves half-written rows.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import aiosqlite

from noema_graph.effects import Effect, Steps, adrive, drive

T = TypeVar("T")

Params = Sequence[Any] | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Statement:
    """One SQL statement to execute.

    Attributes:
        sql: The SQL text, with ``?`` or ``:name`` placeholders.
        params: Parameters for a single execution.
        many: When set, the statement runs once per parameter set (``executemany``).
    """

    sql: str
    params: Params = ()
    many: Sequence[Params] | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a :class:`Statement` produced.

    Attributes:
        rows: Every row it returned (empty for writes).
        lastrowid: The rowid of the last inserted row, when any.
        rowcount: Rows changed by a write, or -1.
    """

    rows: list[sqlite3.Row]
    lastrowid: int | None
    rowcount: int


Op = Generator[Statement, Outcome, T]
"""A database operation returning ``T``."""

PRAGMAS: tuple[str, ...] = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA busy_timeout = 5000",
    "PRAGMA synchronous = NORMAL",
)
"""Connection settings applied by both drivers, outside any transaction."""


def execute(sql: str, params: Params = ()) -> Op[Outcome]:
    """Run one statement and return its :class:`Outcome`."""
    return (yield Statement(sql, params))


def execute_many(sql: str, many: Sequence[Params]) -> Op[Outcome]:
    """Run ``sql`` once per parameter set."""
    return (yield Statement(sql, (), many))


def fetch_all(sql: str, params: Params = ()) -> Op[list[sqlite3.Row]]:
    """Run a query and return every row."""
    outcome = yield Statement(sql, params)
    return outcome.rows


def fetch_one(sql: str, params: Params = ()) -> Op[sqlite3.Row | None]:
    """Run a query and return its first row, or None."""
    outcome = yield Statement(sql, params)
    return outcome.rows[0] if outcome.rows else None


def insert(sql: str, params: Params = ()) -> Op[int]:
    """Run an INSERT and return the new rowid."""
    outcome = yield Statement(sql, params)
    if outcome.lastrowid is None:  # pragma: no cover - SQLite always reports a rowid
        raise RuntimeError(f"INSERT returned no rowid: {sql!r}")
    return outcome.lastrowid


def _begin(write: bool) -> str:
    return "BEGIN IMMEDIATE" if write else "BEGIN DEFERRED"


def _advance(op: Op[T], outcome: Outcome | None) -> Statement:
    return next(op) if outcome is None else op.send(outcome)


def connect_sync(path: str) -> sqlite3.Connection:
    """Open ``path`` with autocommit off-by-hand (explicit BEGIN) and the shared pragmas."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    for pragma in PRAGMAS:
        conn.execute(pragma)
    return conn


async def connect_async(path: str) -> aiosqlite.Connection:
    """Async twin of :func:`connect_sync`."""
    conn = await aiosqlite.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    for pragma in PRAGMAS:
        await conn.execute(pragma)
    return conn


def _run_statement_sync(conn: sqlite3.Connection, stmt: Statement) -> Outcome:
    if stmt.many is not None:
        cursor = conn.executemany(stmt.sql, stmt.many)
        return Outcome([], cursor.lastrowid, cursor.rowcount)
    cursor = conn.execute(stmt.sql, stmt.params)
    rows: list[sqlite3.Row] = cursor.fetchall()
    return Outcome(rows, cursor.lastrowid, cursor.rowcount)


async def _run_statement_async(conn: aiosqlite.Connection, stmt: Statement) -> Outcome:
    if stmt.many is not None:
        cursor = await conn.executemany(stmt.sql, stmt.many)
        return Outcome([], cursor.lastrowid, cursor.rowcount)
    cursor = await conn.execute(stmt.sql, stmt.params)
    rows = list(await cursor.fetchall())
    await cursor.close()
    return Outcome(rows, cursor.lastrowid, cursor.rowcount)


def _transaction(
    op: Op[T], write: bool, execute: Callable[[Statement], Effect[Outcome]]
) -> Steps[T]:
    """Run ``op`` in one transaction: BEGIN, its statements, then COMMIT, or ROLLBACK.

    A statement that fails is thrown in here at its ``yield``, not into ``op``: the
    transaction rolls back, ``op`` is closed and the error goes on to the caller.
    """
    yield execute(Statement(_begin(write)))
    outcome: Outcome | None = None
    try:
        while True:
            try:
                stmt = _advance(op, outcome)
            except StopIteration as stop:
                result: T = stop.value
                break
            outcome = yield execute(stmt)
    except BaseException:
        yield execute(Statement("ROLLBACK"))
        op.close()
        raise
    yield execute(Statement("COMMIT"))
    return result


def run_sync(conn: sqlite3.Connection, op: Op[T], *, write: bool = True) -> T:
    """Run ``op`` over a sqlite3 connection inside one transaction.

    Args:
        conn: A connection from :func:`connect_sync`.
        op: The operation generator.
        write: Take the write lock up front (``BEGIN IMMEDIATE``), which avoids the
            deadlock of two readers upgrading at once.

    Returns:
        The operation's return value, after COMMIT.
    """

    def execute(stmt: Statement) -> Effect[Outcome]:
        return Effect(functools.partial(_run_statement_sync, conn, stmt), _sync_only)

    return drive(_transaction(op, write, execute))


async def run_async(conn: aiosqlite.Connection, op: Op[T], *, write: bool = True) -> T:
    """Async twin of :func:`run_sync` over an aiosqlite connection."""

    def execute(stmt: Statement) -> Effect[Outcome]:
        return Effect(_async_only, functools.partial(_run_statement_async, conn, stmt))

    return await adrive(_transaction(op, write, execute))


def _sync_only() -> Awaitable[Outcome]:
    raise TypeError("a sqlite3 connection runs statements blocking: use run_sync")


def _async_only() -> Outcome:
    raise TypeError("an aiosqlite connection runs statements awaited: use run_async")
