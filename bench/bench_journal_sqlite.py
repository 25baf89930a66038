"""Where a journaled write's SQLite time goes (issue 37 overhead target), in plain sqlite3.

One ``move_card``-like transaction (BEGIN IMMEDIATE, SELECT the card, UPDATE its category,
COMMIT) on copies of the sample store, N times each, interleaved in rounds; the CPU time of
each statement (the thread's, which waits for a core do not inflate), per transaction:

- ``plain``: the journal's trigger on ``cards`` dropped.
- ``journal``: as the store journals a call (schema 3): the change set's INSERT, the
  context row, the UPDATE with its trigger row, the context DELETE, COMMIT.
- ``fewer pages``: the same rows with three pages fewer to write at COMMIT: the context
  in a TEMP table (read by a TEMP trigger), the ``reverts`` index partial (undo sets only),
  no ``change_journal(set_id)`` index (a schema that clusters the journal by set would not
  need it). A measure of what a new schema could save, not a schema.

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
from noema_graph.noema.journal_schema import JOURNALED  # noqa: E402
from noema_graph.storage.sql.connections import PRAGMAS  # noqa: E402

ROUNDS = 4
_ROW = "json_array({})"
_NEW = _ROW.format(",".join(f"NEW.{c}" for c in JOURNALED["cards"].columns))
_OLD = _ROW.format(",".join(f"OLD.{c}" for c in JOURNALED["cards"].columns))
SETUPS: dict[str, tuple[str, ...]] = {
    "plain": ("DROP TRIGGER cards_journal_update",),
    "journal": (),
    "fewer pages": (
        "DROP INDEX change_sets_reverts",
        "CREATE INDEX change_sets_reverts ON change_sets(reverts) WHERE reverts IS NOT NULL",
        "DROP INDEX change_journal_set",
        "DROP TRIGGER cards_journal_update",
        "DROP TABLE journal_context",
        "CREATE TEMP TABLE journal_context (set_id INTEGER NOT NULL)",
        "CREATE TEMP TRIGGER cards_journal_update AFTER UPDATE ON main.cards"
        " WHEN EXISTS(SELECT 1 FROM journal_context) BEGIN INSERT INTO change_journal"
        f"(set_id,table_name,action,before,after) SELECT set_id,'cards','update',{_OLD},{_NEW}"
        " FROM journal_context; END",
    ),
}
INSERT_SET = (
    "INSERT INTO change_sets (thread_id, call_id, tool, step, checkpoint_id, dry_run, reverts,"
    " created_at) VALUES ('bench', ?, 'move_card', ?, NULL, 0, NULL, '2026-11-28T00:00:00+00:00')"
)


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
    if journal:
        set_id = run("INSERT change_sets", INSERT_SET, (f"c{i}", i))
        run("INSERT context", "INSERT INTO journal_context (set_id) VALUES (?)", (set_id,))
    card = 1 + i % 150
    run("SELECT card", "SELECT * FROM cards WHERE id = ?", (card,))
    run("UPDATE card", "UPDATE cards SET category_id = ? WHERE id = ?", (1 + i % 11, card))
    if journal:
        run("DELETE context", "DELETE FROM journal_context")
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
    print(f"{'us CPU per call':20}" + "".join(f"{name:>14}" for name in SETUPS))
    for label in labels:
        cells = "".join(f"{cpu[name].get(label, 0.0) / calls * 1e6:14.1f}" for name in SETUPS)
        print(f"{label:20}{cells}")
    totals = "".join(f"{sum(cpu[name].values()) / calls * 1e6:14.1f}" for name in SETUPS)
    print(f"{'total':20}{totals}")


if __name__ == "__main__":
    main()
