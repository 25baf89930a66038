"""Fuzz the agent graph with generated model output: count escaped exceptions, sync and async.

Usage: nice .venv/bin/python bench/bench_fuzz.py [--runs 10000] [--path sync|async|both]
       [--seed 0] [--db DIR]

Each run is one hypothesis-generated case (tests/reliability/fuzz_model.py: malformed tool
calls, odd content and usage metadata, garbage plans and reflections, exceptions) through the
real agent graph on a real SQLite checkpoint file (one file per path, one thread per run).
Prints, per path: runs, escaped exceptions by class (the target is 0), how the runs ended
(error.code or "none"), runs that broke a promise (an unanswered call, an untyped code, a
raise that did not end in llm_error), and whether the file was still writable afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from noema_graph import async_sqlite_checkpointer, sqlite_checkpointer  # noqa: E402
from tests.reliability.fuzz_model import (  # noqa: E402
    CASES,
    Case,
    Tally,
    run_async,
    run_sync,
    unlocked,
)


def _settings(runs: int) -> settings:
    return settings(
        max_examples=runs,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


def fuzz_sync(db: Path, runs: int, start: int) -> tuple[Tally, bool]:
    """Run ``runs`` generated cases with ``invoke`` on one checkpoint file."""
    tally = Tally()
    with sqlite_checkpointer(db) as saver:

        @seed(start)
        @_settings(runs)
        @given(CASES)
        def one(case: Case) -> None:
            tally.add(run_sync(case, saver, f"sync-{tally.runs}"))

        one()
    return tally, unlocked(db)


def fuzz_async(db: Path, runs: int, start: int) -> tuple[Tally, bool]:
    """Run ``runs`` generated cases with ``ainvoke`` on one checkpoint file, one event loop."""
    tally = Tally()
    with asyncio.Runner() as runner:
        opened = async_sqlite_checkpointer(db)
        saver = runner.run(opened.__aenter__())

        @seed(start)
        @_settings(runs)
        @given(CASES)
        def one(case: Case) -> None:
            tally.add(runner.run(run_async(case, saver, f"async-{tally.runs}")))
            if tally.runs % 500 == 0 and not unlocked(db):
                tally.problems["file locked after a run"] += 1

        try:
            one()
        finally:
            runner.run(opened.__aexit__(None, None, None))
    return tally, unlocked(db)


def report(path: str, tally: Tally, free: bool, seconds: float) -> None:
    """Print one path's counts."""
    per_run = seconds / max(tally.runs, 1) * 1000
    print(f"\n== {path}: {tally.runs} runs in {seconds:.0f} s ({per_run:.0f} ms/run)")
    print("protocols: " + ", ".join(f"{k}={v}" for k, v in tally.protocols.most_common()))
    print(f"escaped exceptions: {sum(tally.escaped.values())}")
    for kind, count in tally.escaped.most_common():
        print(f"  {count:6d}  {tally.examples[kind]}")
    print("ended with error.code: " + ", ".join(f"{k}={v}" for k, v in tally.codes.most_common()))
    print(f"tool observations: {tally.observations}")
    print(f"broken promises: {sum(tally.problems.values())}")
    for kind, count in tally.problems.most_common():
        print(f"  {count:6d}  {tally.examples.get(kind, kind)}")
    print(f"checkpoint file writable afterwards: {free}")


def main() -> None:
    """Parse the arguments and fuzz."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="generated runs per path")
    parser.add_argument("--path", choices=["sync", "async", "both"], default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", type=Path, default=None, help="folder for the checkpoint files")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    logging.getLogger("noema_graph").setLevel(logging.CRITICAL)
    folder = args.db or Path(tempfile.mkdtemp(prefix="noema-fuzz-"))
    paths = ["sync", "async"] if args.path == "both" else [args.path]
    fuzzers = {"sync": fuzz_sync, "async": fuzz_async}
    for path in paths:
        start = time.perf_counter()
        tally, free = fuzzers[path](folder / f"{path}.sqlite", args.runs, args.seed)
        report(path, tally, free, time.perf_counter() - start)


if __name__ == "__main__":
    main()
