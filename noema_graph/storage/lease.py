"""One run per thread at a time: a lease row in the checkpoint database.

Running a thread takes its lease: a row of ``noema_thread_lease`` (thread id, holder, who
the holder is, expiry) in the database of the run's checkpointer, SQLite, PostgreSQL or
in memory alike (see :mod:`noema_graph.storage.side_tables`). Taking it is one statement that
succeeds for exactly one taker (an insert, or a takeover of an expired row). The holder
renews it every third of :data:`LEASE_TTL_S` while the run lives and deletes it when the run
ends, however it ends. A second run of a busy thread follows a multitask strategy, named as
in LangGraph's server (the ``multitask_strategy`` key of the run's ``configurable``):

- ``"reject"`` (the default): :class:`ThreadBusy`, naming the holder;
- ``"enqueue"``: wait until the lease is free, then run.

A lease whose holder died is taken over at once when the holder ran on this host and its
process is gone (:func:`noema_graph.storage.sqlite.liveness.ended`), otherwise when it expires:
``resume``
right after a SIGKILL works. :mod:`noema_graph.graphs.leased` takes the lease around every
run of a compiled noema graph (``invoke``, ``stream`` and their async forms).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeVar, cast, get_args

from noema_graph.errors import ConfigurationError, NoemaError
from noema_graph.storage.side_tables import Database, Rows, aensure_tables, ensure_tables
from noema_graph.storage.sqlite.liveness import ended, writer
from noema_graph.storage.sqlite.writer import FIRST_DELAY_S, MAX_DELAY_S, RETRY_S, is_busy

logger = logging.getLogger(__name__)
T = TypeVar("T")

MultitaskStrategy = Literal["reject", "enqueue"]
STRATEGIES: tuple[str, ...] = get_args(MultitaskStrategy)
STRATEGY_KEY = "multitask_strategy"
"""The ``configurable`` key naming a run's multitask strategy."""
TTL_KEY = "lease_ttl_s"
"""The ``configurable`` key overriding :data:`LEASE_TTL_S` for a run."""
LEASE_TTL_S = 30.0
"""How long a lease outlives its last renewal (a holder on another host that died)."""
WAIT_MAX_S = 0.5
"""Longest pause between two tries of a run that waits (``enqueue``)."""
LEASE_TABLE = "noema_thread_lease"
TABLES = (
    f"CREATE TABLE IF NOT EXISTS {LEASE_TABLE} ("
    " thread_id TEXT PRIMARY KEY, holder TEXT NOT NULL, info TEXT NOT NULL,"
    " expires_at DOUBLE PRECISION NOT NULL)",
)
TAKE_SQL = (
    f"INSERT INTO {LEASE_TABLE} (thread_id, holder, info, expires_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (thread_id) DO UPDATE"
    " SET holder = excluded.holder, info = excluded.info, expires_at = excluded.expires_at"
    f" WHERE {LEASE_TABLE}.expires_at < ?"
    " RETURNING holder"
)
"""Take a free or expired lease: a row back means ours."""
TAKEOVER_SQL = (
    f"UPDATE {LEASE_TABLE} SET holder = ?, info = ?, expires_at = ?"
    " WHERE thread_id = ? AND holder = ? RETURNING holder"
)
"""Take the lease of a holder known to be dead (only if that holder still has it)."""
RENEW_SQL = (
    f"UPDATE {LEASE_TABLE} SET expires_at = ? WHERE thread_id = ? AND holder = ? RETURNING holder"
)
RELEASE_SQL = f"DELETE FROM {LEASE_TABLE} WHERE thread_id = ? AND holder = ?"
READ_SQL = f"SELECT holder, info, expires_at FROM {LEASE_TABLE} WHERE thread_id = ?"


class ThreadBusy(NoemaError):
    """Another run holds the thread's lease (multitask strategy ``reject``)."""

    def __init__(self, thread_id: str, holder: Mapping[str, object]) -> None:
        """Name the thread and the run holding it (``holder``: pid, host, since, until)."""
        self.thread_id = thread_id
        self.holder = dict(holder)
        since = _clock(holder.get("since"))
        super().__init__(
            f"thread {thread_id!r} is busy: another run holds it (pid {holder.get('pid')} on "
            f"{holder.get('host')}, since {since}) (fix: wait for that run to end, or run with "
            f"configurable {STRATEGY_KEY}='enqueue' to wait for it)"
        )


def _clock(stamp: object) -> str:
    if not isinstance(stamp, int | float):
        return "an unknown time"
    return datetime.fromtimestamp(stamp, UTC).strftime("%H:%M:%S UTC")


def strategy_of(configurable: Mapping[str, object]) -> MultitaskStrategy:
    """Return the run's multitask strategy (``reject`` unless ``configurable`` names one).

    Raises:
        ConfigurationError: an unknown strategy, naming the accepted ones.
    """
    value = configurable.get(STRATEGY_KEY, "reject")
    if value not in STRATEGIES:
        raise ConfigurationError(
            STRATEGY_KEY,
            f"unknown multitask strategy {value!r}",
            fix=f"use one of {', '.join(repr(s) for s in STRATEGIES)}",
        )
    return cast(MultitaskStrategy, value)


def ttl_of(configurable: Mapping[str, object]) -> float:
    """Return the lease's time to live: ``configurable["lease_ttl_s"]``, else the default."""
    value = configurable.get(TTL_KEY, LEASE_TTL_S)
    if not isinstance(value, int | float) or value <= 0:
        raise ConfigurationError(TTL_KEY, f"{value!r} is not a positive number of seconds")
    return float(value)


@dataclass(frozen=True)
class Lease:
    """The lease a run wants: on ``thread_id`` of ``database``, as ``holder``."""

    database: Database
    thread_id: str
    strategy: MultitaskStrategy
    ttl_s: float
    holder: str

    def info(self) -> str:
        """Return who holds it, as stored: this process (pid, host, start) and since when."""
        return json.dumps({**writer(), "since": time.time()})


def new_lease(database: Database, thread_id: str, configurable: Mapping[str, object]) -> Lease:
    """Return the lease a run of ``thread_id`` takes (its strategy and TTL from the config)."""
    return Lease(
        database, thread_id, strategy_of(configurable), ttl_of(configurable), uuid.uuid4().hex
    )


def _holder_of(rows: Rows) -> tuple[str, dict[str, object], float] | None:
    if not rows:
        return None
    holder, info, expires = rows[0]
    try:
        parsed = json.loads(cast(str, info))  # the TEXT column
    except ValueError:
        parsed = {}
    return str(holder), parsed if isinstance(parsed, dict) else {}, float(cast(float, expires))


Run = Callable[[str, tuple[object, ...]], T]


RETRY: dict[str, object] = {}
"""What :func:`_try` returns when the lease changed hands meanwhile: try again at once."""


def _try(lease: Lease, run: Run[Rows]) -> dict[str, object] | None:
    """Try once to take ``lease``; None when taken, :data:`RETRY`, else the holder's info."""
    now = time.time()
    until = now + lease.ttl_s
    if run(TAKE_SQL, (lease.thread_id, lease.holder, lease.info(), until, now)):
        return None
    found = _holder_of(run(READ_SQL, (lease.thread_id,)))
    if found is None:
        return RETRY  # released in between
    holder, info, _ = found
    if ended(info):
        params = (lease.holder, lease.info(), until, lease.thread_id, holder)
        if run(TAKEOVER_SQL, params):
            logger.info(
                "took over the lease of %s from dead pid %s", lease.thread_id, info.get("pid")
            )
            return None
        return RETRY  # another run took it over first
    return info


def _retrying(run: Callable[[], T]) -> T:
    """Run a statement, retrying while SQLite reports the file busy (for :data:`RETRY_S`)."""
    deadline, delay = time.monotonic() + RETRY_S, FIRST_DELAY_S
    while True:
        try:
            return run()
        except Exception as exc:  # sqlite3 or psycopg: only "busy" is retried
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, MAX_DELAY_S)


async def _aretrying(run: Callable[[], Awaitable[T]]) -> T:
    """Async :func:`_retrying`."""
    deadline, delay = time.monotonic() + RETRY_S, FIRST_DELAY_S
    while True:
        try:
            return await run()
        except Exception as exc:  # sqlite3 or psycopg: only "busy" is retried
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_DELAY_S)


def _sync_run(database: Database) -> Run[Rows]:
    sync = database.run
    assert sync is not None  # hold() only takes leases of databases with sync access

    def run(sql: str, params: tuple[object, ...]) -> Rows:
        return _retrying(lambda: sync(sql, params))

    return run


def acquire(lease: Lease) -> None:
    """Take ``lease``, waiting (``enqueue``) or raising :class:`ThreadBusy` (``reject``)."""
    _retrying(lambda: ensure_tables(lease.database, LEASE_TABLE, TABLES))
    run = _sync_run(lease.database)
    delay = FIRST_DELAY_S
    while (busy := _try(lease, run)) is not None:
        if busy is RETRY:
            continue
        if lease.strategy == "reject":
            raise ThreadBusy(lease.thread_id, busy)
        time.sleep(delay)
        delay = min(delay * 2, WAIT_MAX_S)


async def aacquire(lease: Lease) -> None:
    """Async :func:`acquire`."""
    await _aretrying(lambda: aensure_tables(lease.database, LEASE_TABLE, TABLES))
    delay = FIRST_DELAY_S
    info = await asyncio.to_thread(lease.info)  # reads /proc: not on the event loop
    while True:
        now = time.time()
        until = now + lease.ttl_s
        params = (lease.thread_id, lease.holder, info, until, now)
        if await _arun(lease, TAKE_SQL, params):
            return
        found = _holder_of(await _arun(lease, READ_SQL, (lease.thread_id,)))
        if found is not None and await asyncio.to_thread(ended, found[1]):
            takeover = (lease.holder, info, until, lease.thread_id, found[0])
            if await _arun(lease, TAKEOVER_SQL, takeover):
                return
        elif found is not None:
            if lease.strategy == "reject":
                raise ThreadBusy(lease.thread_id, found[1])
            await asyncio.sleep(delay)
            delay = min(delay * 2, WAIT_MAX_S)


async def _arun(lease: Lease, sql: str, params: tuple[object, ...]) -> Rows:
    return await _aretrying(lambda: lease.database.arun(sql, params))


def _renewal(lease: Lease) -> tuple[str, tuple[object, ...]]:
    return RENEW_SQL, (time.time() + lease.ttl_s, lease.thread_id, lease.holder)


def _lost(lease: Lease) -> None:
    logger.warning(
        "the lease of thread %s was lost (it expired and another run took it)", lease.thread_id
    )


def _unreleased(lease: Lease, exc: BaseException) -> None:
    logger.warning(
        "could not release the lease of %s (%s); it expires in %.0f s",
        lease.thread_id,
        exc,
        lease.ttl_s,
    )


@contextmanager
def hold(lease: Lease) -> Generator[None]:
    """Take ``lease``, renew it from a thread while the block runs, release it at the end."""
    acquire(lease)
    stop = threading.Event()
    run = _sync_run(lease.database)

    def renew() -> None:
        while not stop.wait(lease.ttl_s / 3):
            try:
                if not run(*_renewal(lease)):
                    _lost(lease)
                    return
            except Exception as exc:  # a failed renewal is retried at the next tick
                logger.warning("could not renew the lease of %s: %s", lease.thread_id, exc)

    renewer = threading.Thread(target=renew, name=f"lease-{lease.thread_id}", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join()
        try:
            run(RELEASE_SQL, (lease.thread_id, lease.holder))
        except Exception as exc:  # the database went away: the lease expires on its own
            _unreleased(lease, exc)


@asynccontextmanager
async def ahold(lease: Lease) -> AsyncGenerator[None]:
    """Async :func:`hold`: an asyncio task renews the lease."""
    await aacquire(lease)

    async def renew() -> None:
        while True:
            await asyncio.sleep(lease.ttl_s / 3)
            try:
                if not await _arun(lease, *_renewal(lease)):
                    _lost(lease)
                    return
            except Exception as exc:  # a failed renewal is retried at the next tick
                logger.warning("could not renew the lease of %s: %s", lease.thread_id, exc)

    renewer = asyncio.create_task(renew())
    try:
        yield
    finally:
        renewer.cancel()
        await asyncio.gather(renewer, return_exceptions=True)
        try:
            await asyncio.shield(_arun(lease, RELEASE_SQL, (lease.thread_id, lease.holder)))
        except Exception as exc:  # the database went away: the lease expires on its own
            _unreleased(lease, exc)


def holder(database: Database, thread_id: str) -> dict[str, object] | None:
    """Return who holds ``thread_id``'s lease (pid, host, start, since), or None when free."""
    ensure_tables(database, LEASE_TABLE, TABLES)
    assert database.run is not None
    found = _holder_of(database.run(READ_SQL, (thread_id,)))
    if found is None or found[2] < time.time():
        return None
    return found[1]
