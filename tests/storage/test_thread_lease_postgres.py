"""The thread lease and the ledger's claim on PostgreSQL, under 16 racing processes.

The same races as ``tests/reliability/test_thread_lease.py``, on a real PostgreSQL server:
approvals of one paused run (exactly one run charges, every other one gets ``ThreadBusy``)
and straight ledger claims of one call (exactly one wins).
"""

from __future__ import annotations

from pathlib import Path

import psycopg

from noema_graph.storage.lease import LEASE_TABLE
from tests.reliability.resume_race import effects, race

WORKERS = 16
ROUNDS = 5


def test_16_processes_approving_one_pause_run_it_once(pg_url: str, tmp_path: Path) -> None:
    outcomes = race(pg_url, tmp_path, workers=WORKERS, rounds=ROUNDS, strategy="reject")
    assert outcomes == [["busy"] * (WORKERS - 1) + ["ran"]] * ROUNDS
    assert sorted(effects(tmp_path)) == [str(r) for r in range(ROUNDS)]
    with psycopg.connect(pg_url) as conn:
        assert conn.execute(f"SELECT count(*) FROM {LEASE_TABLE}").fetchone() == (0,)


def test_16_processes_claiming_one_call_one_wins(pg_url: str, tmp_path: Path) -> None:
    outcomes = race(pg_url, tmp_path, workers=WORKERS, rounds=ROUNDS, strategy="claim")
    assert outcomes == [["refused"] * (WORKERS - 1) + ["won"]] * ROUNDS
