"""noema_graph.server_runs on a real PostgreSQL: heartbeats, and a dead server's runs reaped.

The ``runs`` and ``thread`` tables here hold only the columns the reaper reads and writes
(Aegra's own have more); ``tests/scale`` runs it inside real Aegra servers.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.server_runs import TABLE, Heartbeat, Timing, beat, ensure_table, forget, reap

AEGRA_TABLES = """
CREATE TABLE thread (thread_id TEXT PRIMARY KEY, status TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE runs (run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, status TEXT NOT NULL,
    error_message TEXT, updated_at TIMESTAMPTZ NOT NULL DEFAULT now())
"""


@pytest.fixture
def conn(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_url, autocommit=True) as opened:
        for statement in AEGRA_TABLES.split(";"):
            opened.execute(statement)
        ensure_table(opened)
        yield opened


def _add_run(conn: psycopg.Connection[Any], run: str, thread: str, age_s: float) -> None:
    conn.execute(
        "INSERT INTO thread VALUES (%s, 'busy') ON CONFLICT (thread_id) DO NOTHING", (thread,)
    )
    conn.execute(
        "INSERT INTO runs (run_id, thread_id, status, updated_at)"
        " VALUES (%s, %s, 'running', now() - make_interval(secs => %s))",
        (run, thread, age_s),
    )


def _status(conn: psycopg.Connection[Any], table: str, key: str, value: str) -> Any:
    row = conn.execute(f"SELECT status FROM {table} WHERE {key} = %s", (value,)).fetchone()
    assert row is not None
    return row[0]


def test_only_runs_no_live_server_lists_are_reaped(conn: psycopg.Connection[Any]) -> None:
    _add_run(conn, "listed", "t1", 60)  # old, but a live server executes it
    _add_run(conn, "orphan", "t2", 60)  # old and nobody's: its server died
    _add_run(conn, "fresh", "t3", 0)  # nobody lists it yet: just created, within the grace
    _add_run(conn, "dead-server", "t4", 60)
    beat(conn, "alive", ["listed"])
    beat(conn, "dead", ["dead-server"])
    conn.execute(
        f"UPDATE {TABLE} SET heartbeat_at = now() - interval '1 minute' WHERE server_id = 'dead'"
    )
    ended = reap(conn, ttl_s=10)
    assert sorted(ended) == [("dead-server", "t4"), ("orphan", "t2")]
    assert [_status(conn, "runs", "run_id", r) for r in ("listed", "fresh")] == ["running"] * 2
    row = conn.execute("SELECT status, error_message FROM runs WHERE run_id = 'orphan'").fetchone()
    assert row is not None and row[0] == "error" and "resume it on any server" in row[1]
    assert _status(conn, "thread", "thread_id", "t2") == "error"
    assert _status(conn, "thread", "thread_id", "t1") == "busy"
    assert reap(conn, ttl_s=10) == []  # done once: a second server looking changes nothing


def test_a_thread_with_another_active_run_stays_busy(conn: psycopg.Connection[Any]) -> None:
    _add_run(conn, "old", "t1", 60)
    _add_run(conn, "new", "t1", 0)  # its resume, on a live server
    beat(conn, "alive", ["new"])
    assert reap(conn, ttl_s=10) == [("old", "t1")]
    assert _status(conn, "thread", "thread_id", "t1") == "busy"


def test_the_heartbeat_thread_beats_reaps_and_forgets(
    conn: psycopg.Connection[Any], pg_url: str
) -> None:
    _add_run(conn, "orphan", "t1", 60)
    active = ["mine"]
    timing = Timing(heartbeat_s=0.05, ttl_s=1)
    with Heartbeat(pg_url, active=lambda: active, timing=timing) as heart:
        deadline = time.monotonic() + 60  # a hung heartbeat fails the test instead
        while _status(conn, "runs", "run_id", "orphan") != "error":  # wait on the row
            assert time.monotonic() < deadline, "the heartbeat never reaped the orphan run"
            heart.ticked.wait(5)
            heart.ticked.clear()
        row = conn.execute(
            f"SELECT active FROM {TABLE} WHERE server_id = %s",
            (heart.server_id,),
        ).fetchone()
        assert row == (["mine"],)
    assert ("orphan", "t1") in heart.reaped
    gone = conn.execute(f"SELECT count(*) FROM {TABLE} WHERE server_id = %s", (heart.server_id,))
    assert gone.fetchone() == (0,)
    forget(conn, "nobody")  # forgetting a server that never beat is harmless


def test_timing_comes_from_the_environment_and_is_checked() -> None:
    assert Timing.from_env({}) == Timing(2.0, 10.0)
    assert Timing.from_env({"NOEMA_SERVER_HEARTBEAT_S": "1", "NOEMA_SERVER_TTL_S": "5"}) == Timing(
        1.0, 5.0
    )
    with pytest.raises(ConfigurationError, match=r"NOEMA_SERVER_TTL_S.*two heartbeats"):
        Timing.from_env({"NOEMA_SERVER_TTL_S": "3"})
    with pytest.raises(ConfigurationError, match="'soon' is not a number"):
        Timing.from_env({"NOEMA_SERVER_HEARTBEAT_S": "soon"})
