"""Concurrent approvals of one paused run: 16 processes, one thread, the same instant.

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_resume_race.py [--rounds 50] [--workers 16]
        [--strategy reject|enqueue|claim] [--database-url postgresql://...]

Each round pauses a run before a non-idempotent ``charge`` call (``confirm_tools``); the
workers each compute ``resume_with(graph, config, "approve")``, wait at a FIFO barrier and
invoke the graph at once (see ``tests/reliability/resume_race.py``). Without a URL the
checkpoints live in a fresh SQLite file; with ``--database-url`` a PostgreSQL database
(``python -m tests.pg`` starts one). Targets (issue 29): the charge runs exactly once per
round; under ``reject`` every other worker gets ``ThreadBusy``; ``claim`` races the ledger's
claim of one call directly (exactly one wins).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability.resume_race import effects, race  # noqa: E402


def main() -> None:
    """Run the rounds and print one Markdown table row per backend."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--strategy", default="reject", choices=["reject", "enqueue", "claim"])
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="noema-race-"))
    db = args.database_url or str(folder / "runs.sqlite")
    timings: list[float] = []
    began = time.perf_counter()
    rounds = race(db, folder, workers=args.workers, rounds=args.rounds,
                  strategy=args.strategy, timings=timings)  # fmt: skip
    wall = time.perf_counter() - began
    ran = Counter(effects(folder))
    tally = Counter(o for outcomes in rounds for o in outcomes)
    exact = sum(1 for r in range(args.rounds) if ran[str(r)] == (args.strategy != "claim"))
    backend = "postgres" if args.database_url else "sqlite"
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}")  # fmt: skip
    print("| backend | strategy | rounds | workers | tool ran exactly once | outcomes | "
          "round s median | round s max | total s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {backend} | {args.strategy} | {args.rounds} | {args.workers} | "
        f"{exact}/{args.rounds} | {dict(sorted(tally.items()))} | "
        f"{statistics.median(timings):.2f} | {max(timings):.2f} | {wall:.0f} |"
    )


if __name__ == "__main__":
    main()
