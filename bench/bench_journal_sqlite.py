"""Where a journaled write's SQLite time goes (issue 37 overhead target), in plain sqlite3.

One ``move_card``-like transaction (BEGIN IMMEDIATE, SELECT the card, UPDATE its category,
COMMIT) on copies of the sample store, N times each, interleaved in rounds; the CPU time of
each statement (the thread's, which waits for a core do not inflate), per transaction:

- ``plain``: the journal's trigger on ``cards`` dropped.
- ``journal``: as the store journals a call: the change set opened (unless the thread was
  undone), the UPDATE with its trigger row, the set closed, COMMIT
  (:data:`~noema_graph.noema.journal.OPEN_SET`, :data:`~noema_graph.noema.journal.CLOSE_SET`).

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_journal_sqlite.py [--calls 3000]
"""

from __future__ import annotations

import argparse
import collections
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noema_graph.noema.demo import write_demo_data  # noqa: E402  # after the path
from noema_graph.noema.journal import CLOSE_SET, OPEN_SET  # noqa: E402
from noema_graph.storage.sql.connections import PRAGMAS  # noqa: E402

ROUNDS = 4
SETUPS: dict[str, tuple[str, ...]] = {
    "plain": ("DROP TRIGGER cards_journal_update",),
    "journal": (),
}
CREATED = "2026-11-28T00:00:00+00:00"


def connect(path: Path, setup: tuple[str, ...]) -> sqlite3.Connection:
    """Open ``path`` as the store does and apply ``setup``."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in (*PRAGMAS, *setup):
        conn.execute(statement)
    return conn


def transaction(conn: sqlite3.Connection, i: int, journal: bool, cpu: dict[str, float]) -> None:
    """Run call ``i``, adding each statement's CPU seconds to ``cpu``."""

    def run(label: str, sql: str, params: tuple[object, ...] = ()) -> int | None:
        start = time.thread_time()
        cursor = conn.execute(sql, params)
        cursor.fetchall()
        cpu[label] += time.thread_time() - start
        return cursor.lastrowid

    run("BEGIN", "BEGIN IMMEDIATE")
    set_id = None
    if journal:
        # thread, call, tool, step, checkpoint, dry run, reverts, created; the thread again
        values = ("bench", f"c{i}", "move_card", i, None, 0, None, CREATED, "bench")
        set_id = run("open the set", OPEN_SET, values)
    card = 1 + i % 150
    run("SELECT card", "SELECT * FROM cards WHERE id = ?", (card,))
    run(
        "UPDATE card (+ trigger row)",
        "UPDATE cards SET category_id = ? WHERE id = ?",
        (1 + i % 11, card),
    )
    if set_id is not None:
        run("close the set", CLOSE_SET, (set_id,))
    run("COMMIT", "COMMIT")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    per_round = max(1, args.calls // ROUNDS)
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "base.db"
        write_demo_data(base)
        conns: dict[str, sqlite3.Connection] = {}
        for n, (name, setup) in enumerate(SETUPS.items()):
            copy = Path(folder) / f"{n}.db"
            shutil.copy(base, copy)
            conns[name] = connect(copy, setup)
        cpu = {name: collections.defaultdict[str, float](float) for name in SETUPS}
        for r in range(ROUNDS):
            for name, conn in conns.items():
                for i in range(r * per_round, (r + 1) * per_round):
                    transaction(conn, i, name != "plain", cpu[name])
        for conn in conns.values():
            conn.close()
    calls = ROUNDS * per_round
    labels = list(cpu["journal"])
    print(f"{'us CPU per call':30}" + "".join(f"{name:>10}" for name in SETUPS))
    for label in labels:
        cells = "".join(f"{cpu[name].get(label, 0.0) / calls * 1e6:10.1f}" for name in SETUPS)
        print(f"{label:30}{cells}")
    totals = "".join(f"{sum(cpu[name].values()) / calls * 1e6:10.1f}" for name in SETUPS)
    print(f"{'total':30}{totals}")


if __name__ == "__main__":
    main()
