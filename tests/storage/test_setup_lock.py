"""Table creation under the setup lock, while other processes wait for it.

A process blocked in ``pg_advisory_lock`` holds a snapshot, and the lock holder's
``CREATE INDEX CONCURRENTLY`` (LangGraph's migrations) waits for every older snapshot: a
deadlock through the holder's client that PostgreSQL cannot detect. A waiting
``open_backend`` must therefore poll, holding no snapshot between tries.
"""

from __future__ import annotations

import threading
import time

import psycopg

from noema_graph.storage.backends import SETUP_LOCK, open_backend

GUARD_S = 60.0


def _waiting(url: str, holder: int) -> bool:
    """Return True once another session than ``holder`` has asked for the setup lock."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE %s"
            " AND pid NOT IN (pg_backend_pid(), %s)",
            ("%advisory_lock(%", holder),
        ).fetchone()
    return bool(row and row[0])


def test_a_waiting_setup_does_not_block_the_holders_concurrent_index(pg_url: str) -> None:
    opened = threading.Event()
    errors: list[BaseException] = []

    def open_and_close() -> None:
        try:
            with open_backend(pg_url):
                opened.set()
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)
            opened.set()

    with psycopg.connect(pg_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK,))
        waiter = threading.Thread(target=open_and_close, daemon=True)
        waiter.start()
        deadline = time.monotonic() + GUARD_S
        while not _waiting(pg_url, holder.info.backend_pid):
            assert time.monotonic() < deadline and not opened.is_set(), errors
        with psycopg.connect(pg_url, autocommit=True) as migrator:
            migrator.execute("SET statement_timeout = '20s'")
            migrator.execute("CREATE TABLE probe (i int)")
            migrator.execute("CREATE INDEX CONCURRENTLY probe_i ON probe (i)")  # no deadlock
        assert not opened.is_set(), "the waiter opened while the lock was held"
        holder.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
    assert opened.wait(GUARD_S) and not errors, errors
    waiter.join(GUARD_S)
