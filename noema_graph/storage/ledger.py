"""A durable ledger of non-idempotent tool calls, so a call never runs twice silently.

Before a ``non_idempotent`` tool runs, its call is claimed in the ``noema_tool_ledger`` table
of the Store's database with one statement that succeeds for exactly one claimant
(``INSERT ... ON CONFLICT DO UPDATE ... WHERE status = 'paused' RETURNING``), committed at
once, unlike the node's own writes, which land in the checkpoint only when the task ends.
Two processes resuming the same thread, or a task that runs again after a crash, find the
call claimed: the tool does not run a second time and the model gets an observation saying
so. A tool that pauses the run itself (``interrupt()``) is recorded as ``paused`` and may be
claimed again on resume (LangGraph re-runs an interrupted task), by one claimant. A call is
claimed only when it executes: a call waiting for approval is not in the ledger.

The table lives beside LangGraph's (see :mod:`noema_graph.storage.side_tables`): SQLite, PostgreSQL
and the in-memory Store can claim atomically. Without a Store there is no ledger, and the
checkpoint's per-call tasks are the only protection; with a Store that cannot claim
atomically, non-idempotent calls are refused (fail closed).

The ledger fails closed: a claim that finds the database busy is retried for
:data:`RETRY_S`; if it still cannot be recorded, the call is not run and the model gets an
error observation saying why. A settle that cannot be recorded leaves the call ``started``,
so a later resume refuses to repeat it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar, cast

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from noema_graph.effects import Steps, io
from noema_graph.errors import NoemaError
from noema_graph.storage.side_tables import (
    LEDGER_NAMESPACE,
    LEDGER_TABLE,
    Database,
    adatabase_of,
    aensure_tables,
    database_of,
)
from noema_graph.storage.side_tables import ensure_tables as ensure_side_tables
from noema_graph.storage.sqlite.writer import FIRST_DELAY_S, MAX_DELAY_S, RETRY_S, is_busy
from noema_graph.storage.urls import store_errors

logger = logging.getLogger(__name__)
T = TypeVar("T")

TABLES = (
    f"CREATE TABLE IF NOT EXISTS {LEDGER_TABLE} ("
    " thread_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,"
    " status TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (thread_id, call_id))",
)
CLAIM_SQL = (
    f"INSERT INTO {LEDGER_TABLE} (thread_id, call_id, tool, status, updated_at)"
    " VALUES (?, ?, ?, 'started', ?)"
    " ON CONFLICT (thread_id, call_id) DO UPDATE"
    " SET status = 'started', updated_at = excluded.updated_at"
    f" WHERE {LEDGER_TABLE}.status = 'paused'"
    " RETURNING status"
)
"""The claim: inserts the call, or takes it back from ``paused``; a row back means ours."""
SETTLE_SQL = (
    f"UPDATE {LEDGER_TABLE} SET status = ?, updated_at = ? WHERE thread_id = ? AND call_id = ?"
)
READ_SQL = f"SELECT call_id, status, tool FROM {LEDGER_TABLE} WHERE thread_id = ?"
_PREFIX = ".".join(LEDGER_NAMESPACE) + "."
LEGACY_SQL = {
    "sqlite": (
        f"INSERT INTO {LEDGER_TABLE} (thread_id, call_id, tool, status, updated_at)"
        f" SELECT substr(prefix, {len(_PREFIX) + 1}), key,"
        " CASE WHEN json_valid(value) THEN coalesce(json_extract(value, '$.tool'), '?')"
        " ELSE '?' END,"
        " CASE WHEN json_valid(value) THEN coalesce(json_extract(value, '$.status'), 'started')"
        " ELSE 'started' END, 0"
        f" FROM store WHERE prefix LIKE '{_PREFIX}%' ON CONFLICT DO NOTHING"
    ),
    "postgres": (
        f"INSERT INTO {LEDGER_TABLE} (thread_id, call_id, tool, status, updated_at)"
        f" SELECT substr(prefix, {len(_PREFIX) + 1}), key, coalesce(value->>'tool', '?'),"
        " coalesce(value->>'status', 'started'), 0"
        f" FROM store WHERE prefix LIKE '{_PREFIX}%' ON CONFLICT DO NOTHING"
    ),
}
"""Carry the entries a file kept as Store items (before the table) into the table, once."""


def _tables(database: Database) -> tuple[str, ...]:
    """Return the setup statements: the table, then the older entries of a SQL Store."""
    return TABLES if database.in_memory else (*TABLES, LEGACY_SQL[database.dialect])


LedgerStatus = Literal["started", "done", "paused"]
"""A call's ledger entry: running (or crashed), finished, or paused by its own interrupt()."""


class LedgerUnavailable(NoemaError):
    """The Store could not read or record a ledger entry (after retries)."""

    def __init__(self, cause: BaseException) -> None:
        """Wrap the Store's error ``cause``."""
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


def needs_ledger(tool: BaseTool, store: BaseStore | None) -> bool:
    """Return True when ``tool`` is non-idempotent and a Store can hold the ledger."""
    return store is not None and (tool.metadata or {}).get("idempotency") == "non_idempotent"


class NoAtomicClaim(NoemaError):
    """The Store's database is not one the ledger can claim a call in atomically."""


def _database(store: BaseStore) -> Steps[Database]:
    """Return the database behind ``store`` and create the ledger table there once."""

    def run() -> Database:
        found = database_of(store)
        if found is None or found.run is None:
            raise NoAtomicClaim(type(store).__name__)
        ensure_side_tables(found, LEDGER_TABLE, _tables(found))
        return found

    async def arun() -> Database:
        found = await adatabase_of(store)
        if found is None:
            raise NoAtomicClaim(type(store).__name__)
        await aensure_tables(found, LEDGER_TABLE, _tables(found))
        return found

    return (yield from _retried(run, arun))


def _execute(
    database: Database, sql: str, params: tuple[object, ...]
) -> Steps[list[tuple[object, ...]]]:
    def run() -> list[tuple[object, ...]]:
        assert database.run is not None  # _database refused an async-only one on this path
        return database.run(sql, params)

    return (yield from _retried(run, lambda: database.arun(sql, params)))


def _refusal(previous: dict[str, object]) -> str | None:
    """Return why a recorded call may not run again, or None when it may (it paused)."""
    status = previous.get("status")
    if status == "paused":
        return None
    if status == "done":
        return (
            "Not executed again: this non-idempotent call already ran before the run was "
            "interrupted; its effect is in place."
        )
    return (
        "Not executed again: this non-idempotent call was interrupted by a crash (or is "
        "running in another process) and may or may not have taken effect. Check its effect "
        "before calling it again with a new call."
    )


def _store_error(exc: BaseException) -> bool:
    """Return True when ``exc`` comes from the Store's backend (not a bug in the caller)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, store_errors()):
            return True
        seen = seen.__cause__
    return False


def _sleep(seconds: float) -> Steps[None]:
    yield io(lambda: time.sleep(seconds), lambda: asyncio.sleep(seconds))


def _retried(run: Callable[[], T], arun: Callable[[], Awaitable[T]]) -> Steps[T]:
    """Run a Store operation; retry it while the file is busy, for up to :data:`RETRY_S`.

    Raises:
        LedgerUnavailable: the Store failed (busy past the deadline, or another backend error).
    """
    deadline = time.monotonic() + RETRY_S
    delay = FIRST_DELAY_S
    while True:
        try:
            return (yield io(run, arun))
        except (*store_errors(), ValueError) as exc:  # SQLite stores may wrap in ValueError
            if not _store_error(exc):
                raise
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise LedgerUnavailable(exc) from exc
        yield from _sleep(delay)
        delay = min(delay * 2, MAX_DELAY_S)


def _status(database: Database, thread: str, call_id: str) -> Steps[dict[str, object]]:
    rows = yield from _execute(database, READ_SQL + " AND call_id = ?", (thread, call_id))
    return {"status": rows[0][1], "tool": rows[0][2]} if rows else {"status": "started"}


def claim(store: BaseStore, thread: str, call: dict[str, object]) -> Steps[str | None]:
    """Claim ``call`` in one statement; return a refusal if another claimant has it.

    A call recorded as ``paused`` (the tool itself called ``interrupt()``) is claimed again:
    LangGraph re-runs an interrupted task from its start when the caller resumes. When the
    claim cannot be recorded, or the Store cannot claim atomically, the call is refused
    (fails closed): running it unrecorded could repeat it.
    """
    key = str(call["id"])
    params = (thread, key, str(call["name"]), time.time())
    try:
        database = yield from _database(store)
        if (yield from _execute(database, CLAIM_SQL, params)):
            return None
        previous = yield from _status(database, thread, key)
    except (NoAtomicClaim, LedgerUnavailable) as exc:
        logger.warning("tool ledger: %s; refusing %s", exc, call["name"])
        return _unrecorded(exc)
    return _refusal(previous) or _refusal({"status": "started"})


def _unrecorded(exc: NoAtomicClaim | LedgerUnavailable) -> str:
    """Return the refusal of a non-idempotent call the ledger could not record."""
    if isinstance(exc, NoAtomicClaim):
        why = f"this agent's Store ({exc}) cannot record a non-idempotent call atomically"
        fix = "Use a SQLite, PostgreSQL or in-memory Store."
    else:
        why = f"the tool ledger could not record this non-idempotent call ({exc})"
        fix = "Try the call again later."
    return f"Not executed: {why}, so the call was not run (it could otherwise run twice). {fix}"


def settle(
    store: BaseStore, thread: str, call: dict[str, object], status: LedgerStatus = "done"
) -> Steps[None]:
    """Record ``call`` as ``done`` (or ``paused``: it called ``interrupt()``).

    If it cannot be recorded, the entry stays ``started``: a resume after a crash then
    refuses to repeat the call, which is the safe side.
    """
    try:
        database = yield from _database(store)
        params = (status, time.time(), thread, str(call["id"]))
        yield from _execute(database, SETTLE_SQL, params)
    except (LedgerUnavailable, NoAtomicClaim) as exc:
        logger.warning(
            "tool ledger could not record %s as %s (%s); it stays 'started'",
            call["name"],
            status,
            exc,
        )


def entries(store: BaseStore, thread: str) -> dict[str, LedgerStatus]:
    """Return ``thread``'s ledger: each claimed call id and its status (for inspection)."""
    database = database_of(store)
    if database is None or database.run is None:
        raise NoAtomicClaim(type(store).__name__)
    ensure_side_tables(database, LEDGER_TABLE, _tables(database))
    return {str(row[0]): cast(LedgerStatus, row[1]) for row in database.run(READ_SQL, (thread,))}


async def aentries(store: BaseStore, thread: str) -> dict[str, LedgerStatus]:
    """Async :func:`entries`."""
    database = await adatabase_of(store)
    if database is None:
        raise NoAtomicClaim(type(store).__name__)
    await aensure_tables(database, LEDGER_TABLE, _tables(database))
    return {
        str(row[0]): cast(LedgerStatus, row[1]) for row in await database.arun(READ_SQL, (thread,))
    }
