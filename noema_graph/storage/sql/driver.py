"""Sans-IO database operations, run by a sync or an async driver on SQLite or PostgreSQL.

An operation is a generator that yields :class:`Statement` objects and receives an
:class:`Outcome` for each; its return value is the operation's result. The same generator
therefore runs unchanged over ``sqlite3`` (scripts, demo data), ``aiosqlite`` (agents) and
psycopg (sync and async, :mod:`noema_graph.storage.sql.connections`), and the SQL and the domain
logic exist once; what differs between the databases is in :mod:`noema_graph.storage.sql.dialect`.
Each run is one transaction: an exception anywhere rolls everything back, so bad input never
leaves half-written rows.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from noema_graph.effects import Effect, Steps, adrive, drive
from noema_graph.errors import ExternalError, MisuseError
from noema_graph.storage.sql.dialect import DialectName, begin

if TYPE_CHECKING:
    from _typeshed import SupportsKeysAndGetItem

    Row = SupportsKeysAndGetItem[str, Any]
    """A result row: ``row["column"]`` and ``dict(row)`` (``sqlite3.Row`` or a dict)."""
else:
    Row = Any

T = TypeVar("T")

Params = Sequence[object] | Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Statement:
    """One SQL statement to execute.

    Attributes:
        sql: The SQL text, with ``?`` or ``:name`` placeholders (either database).
        params: Parameters for a single execution.
        many: When set, the statement runs once per parameter set (``executemany``).
        postgres: The statement's PostgreSQL text where it differs (same placeholders).
        returns_id: An INSERT whose new ``id`` the caller wants (:attr:`Outcome.lastrowid`).
    """

    sql: str
    params: Params = ()
    many: Sequence[Params] | None = None
    postgres: str | None = None
    returns_id: bool = False


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a :class:`Statement` produced.

    Attributes:
        rows: Every row it returned (empty for writes).
        lastrowid: The id of the row a ``returns_id`` INSERT created, when any.
        rowcount: Rows changed by a write, or -1.
    """

    rows: Sequence[Row]
    lastrowid: int | None
    rowcount: int


Op = Generator[Statement, Outcome, T]
"""A database operation returning ``T``."""


class SyncConnection(Protocol):
    """A blocking connection that runs one :class:`Statement` at a time."""

    @property
    def dialect(self) -> DialectName:
        """Which SQL the database speaks."""
        ...

    def run_statement(self, stmt: Statement) -> Outcome:
        """Execute ``stmt`` and return what it produced."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


class AsyncConnection(Protocol):
    """An awaited connection that runs one :class:`Statement` at a time."""

    @property
    def dialect(self) -> DialectName:
        """Which SQL the database speaks."""
        ...

    async def run_statement(self, stmt: Statement) -> Outcome:
        """Execute ``stmt`` and return what it produced."""
        ...

    async def close(self) -> None:
        """Close the connection."""
        ...


def execute(sql: str, params: Params = (), *, postgres: str | None = None) -> Op[Outcome]:
    """Run one statement and return its :class:`Outcome`."""
    return (yield Statement(sql, params, postgres=postgres))


def execute_many(sql: str, many: Sequence[Params]) -> Op[Outcome]:
    """Run ``sql`` once per parameter set."""
    return (yield Statement(sql, (), many))


def fetch_all(sql: str, params: Params = (), *, postgres: str | None = None) -> Op[list[Row]]:
    """Run a query and return every row."""
    outcome = yield Statement(sql, params, postgres=postgres)
    return list(outcome.rows)


def fetch_one(sql: str, params: Params = (), *, postgres: str | None = None) -> Op[Row | None]:
    """Run a query and return its first row, or None."""
    outcome = yield Statement(sql, params, postgres=postgres)
    return outcome.rows[0] if outcome.rows else None


def insert(sql: str, params: Params = ()) -> Op[int]:
    """Run an INSERT into a table with an ``id`` column and return the new row's id."""
    outcome = yield Statement(sql, params, returns_id=True)
    if outcome.lastrowid is None:
        raise ExternalError(f"INSERT created no row: {sql!r}")
    return outcome.lastrowid


def _advance(op: Op[T], outcome: Outcome | None) -> Statement:
    return next(op) if outcome is None else op.send(outcome)


def _transaction(
    op: Op[T],
    opening: Sequence[str],
    execute: Callable[[Statement], Effect[Outcome]],
) -> Steps[T]:
    """Run ``op`` in one transaction: the ``opening`` statements, its own, then COMMIT.

    A statement that fails is thrown in here at its ``yield``, not into ``op``: the
    transaction rolls back, ``op`` is closed and the error goes on to the caller.
    """
    for sql in opening:
        yield execute(Statement(sql))
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


def run_sync(conn: SyncConnection, op: Op[T], *, write: bool = True) -> T:
    """Run ``op`` over a blocking connection inside one transaction.

    Args:
        conn: A connection from :func:`noema_graph.storage.sql.connections.connect_sync`.
        op: The operation generator.
        write: Take the write lock up front (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's
            advisory lock), which avoids the deadlock of two readers upgrading at once.

    Returns:
        The operation's return value, after COMMIT.
    """

    def execute(stmt: Statement) -> Effect[Outcome]:
        return Effect(functools.partial(conn.run_statement, stmt), _sync_only)

    return drive(_transaction(op, begin(conn.dialect, write=write), execute))


async def run_async(conn: AsyncConnection, op: Op[T], *, write: bool = True) -> T:
    """Async twin of :func:`run_sync` over an awaited connection."""

    def execute(stmt: Statement) -> Effect[Outcome]:
        return Effect(_async_only, functools.partial(conn.run_statement, stmt))

    return await adrive(_transaction(op, begin(conn.dialect, write=write), execute))


def _sync_only() -> Awaitable[Outcome]:
    raise MisuseError("a blocking connection runs statements in place: use run_sync")


def _async_only() -> Outcome:
    raise MisuseError("an async connection runs statements awaited: use run_async")
