"""SIGKILL a process in the middle of journaled writes, 20 times (issue 37).

Each round starts a child that makes journaled write calls (the agents' write tools, each
in its own transaction, thread ``killK``) in a loop on the sample store, and SIGKILLs it
after a random delay, most often inside a transaction. The parent then checks that the
journal and the store agree: no journal context is left, every change set has rows, the
newest journaled value of every row is the row's current value, and undoing the thread
restores the store exactly as it was before the child started (so no write was kept
without its journal rows, and no journal row without its write).

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_journal_sigkill.py [--kills 20] [--seed 37]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noema_graph.errors import NoemaError  # noqa: E402  # after the path
from noema_graph.noema.demo import write_demo_data  # noqa: E402
from noema_graph.noema.journal import ChangeContext, thread_changes, undo_thread  # noqa: E402
from noema_graph.noema.journal_schema import JOURNAL_TABLE, SETS_TABLE, in_set  # noqa: E402
from noema_graph.noema.store import LearningStore  # noqa: E402
from noema_graph.storage.sql.driver import fetch_all  # noqa: E402
from tests.noema.journal_helpers import snapshot  # noqa: E402


def calls(i: int) -> tuple[str, dict[str, Any]]:
    """Return the i-th write of the loop (several rows each: many statements to cut)."""
    card = 1 + i % 40
    new = [{"front": f"Q{i}", "back": "A", "concepts": [f"k{i}"]}] * 3
    text = "Sentence one. " * 200
    return [
        ("create_cards", {"deck_id": 1, "cards": new}),
        ("record_review", {"user_id": 1 + i % 3, "card_id": card, "rating": 3,
                           "response_time_ms": 900}),
        ("move_card", {"card_id": card, "category_id": 1 + i % 11}),
        ("flag_quality_issues", {}),
        ("ingest_text", {"title": f"T{i}", "text": text, "chunk_size": 300, "overlap": 30}),
        ("link_concepts", {"source": f"k{i}", "target": f"k{i + 1}", "kind": "related_to"}),
    ][i % 6]  # fmt: skip


def child(path: str, thread: str) -> None:
    """Write in a loop until killed."""
    with LearningStore.open(path) as store:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        for i in range(1_000_000):
            name, arguments = calls(i)
            with contextlib.suppress(NoemaError):  # a refused call writes nothing
                store.call_journaled(name, arguments, ChangeContext(thread, f"c{i}", name, i))


def check(path: Path, thread: str, before: Any) -> tuple[int, int]:
    """Check journal and store agree after the kill; undo the thread; return (sets, rows)."""
    with LearningStore.open(path) as store:
        writing = f"SELECT id FROM {SETS_TABLE} WHERE writing IS NOT NULL"
        assert store.run(fetch_all(writing), write=False) == []
        empty = store.run(
            fetch_all(
                f"SELECT id FROM {SETS_TABLE} s WHERE NOT EXISTS (SELECT 1 FROM {JOURNAL_TABLE} j"
                f" WHERE j.id {in_set('s.id')})"
            ),
            write=False,
        )
        assert empty == [], empty
        found = store.run(thread_changes(thread), write=False)
        newest: dict[tuple[str, str], Any] = {}
        for change in found:
            newest[change.table, repr(sorted(change.key.items()))] = change
        for change in newest.values():
            where = " AND ".join(f"{k} = ?" for k in change.key)
            rows = store.run(
                fetch_all(f"SELECT * FROM {change.table} WHERE {where}", list(change.key.values())),
                write=False,
            )
            current = dict(rows[0]) if rows else None
            assert (current is None) == (change.after is None), change
            if current is not None and change.after is not None:
                assert all(current[c] == v for c, v in change.after.items()), change
        if found:
            store.run(undo_thread(thread))
        assert snapshot(store) == before, "undoing the killed thread did not restore the store"
        return len({c.set_id for c in found}), len(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--child", nargs=2, metavar=("DB", "THREAD"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "learn.db"
        write_demo_data(path)
        total_sets = 0
        for k in range(1, args.kills + 1):
            with LearningStore.open(path) as store:
                before = snapshot(store)
            thread = f"kill{k}"
            proc = subprocess.Popen(
                [sys.executable, __file__, "--child", str(path), thread],
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == b"ready"
            delay = rng.uniform(0.05, 1.5)
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            sets, rows = check(path, thread, before)
            total_sets += sets
            print(
                f"kill {k:2}: after {delay:.2f}s, {sets} calls committed ({rows} rows): consistent"
            )
        print(
            f"{args.kills} kills: journal and store consistent each time; {total_sets} calls undone"
        )


if __name__ == "__main__":
    main()
