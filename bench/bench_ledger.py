"""The non-idempotent ledger at full load: async runs and worker processes on one SQLite file.

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_ledger.py [--async-runs 32]
        [--processes 8] [--threads 4] [--rounds 3]

Each round uses a fresh file whose Store shares the checkpoint file: ``--async-runs``
concurrent ``ainvoke`` runs in this process while ``--processes`` workers run ``--threads``
sync runs each; every run makes 3 non-idempotent calls (see
``tests/reliability/ledger_load.py``). Targets (issue 17): 0 "database is locked"
surfacing, 0 unguarded (or refused) calls, 0 lost checkpoints, every call run exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability.ledger_load import (  # noqa: E402
    CALLS,
    async_runs,
    join_workers,
    locked,
    outcome,
    start_workers,
)

HEADER = (
    "| round | runs | calls | ran once | repeated | missing | refused/unguarded | "
    "locked surfacing | lost checkpoints | other warnings | errors | wall s |"
)


async def one_round(index: int, args: argparse.Namespace) -> bool:
    """Run one round on a fresh file; print its row; return True when every target holds."""
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        db, effects = tmp / "runs.sqlite", tmp / "effects.log"
        started = time.perf_counter()
        workers = start_workers(db, effects, tmp, processes=args.processes, threads=args.threads)
        problems = await async_runs(db, effects, "a", args.async_runs)
        problems.merge(join_workers(workers))
        wall = time.perf_counter() - started
        runs = [f"a{i}" for i in range(args.async_runs)]
        runs += [f"p{p}-{t}" for p in range(args.processes) for t in range(args.threads)]
        result = outcome(db, effects, runs)
    ledger = [w for w in problems.warnings if "ledger" in w]
    busy = locked(problems)
    other = [w for w in problems.warnings if w not in ledger and w not in busy]
    once = sum(1 for n in result.executions.values() if n == 1)
    cells = [
        index, len(runs), len(runs) * CALLS, once, len(result.repeated), len(result.missing),
        len(ledger) + len(result.refused), len(busy), len(result.lost_checkpoints), len(other),
        len(problems.errors), f"{wall:.1f}",
    ]  # fmt: skip
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)
    for line in [*problems.errors, *busy, *ledger, *other][:5]:
        print(f"  {line[:200]}", file=sys.stderr)
    return (
        once == len(runs) * CALLS
        and not (result.repeated or result.missing or result.refused or result.lost_checkpoints)
        and not (ledger or busy or problems.errors)
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--async-runs", type=int, default=32)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(
        f"{args.async_runs} async runs + {args.processes} processes x {args.threads} threads, "
        f"{CALLS} non-idempotent calls per run; {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load {load:.1f} at start"
    )
    print(HEADER)
    print("|" + " ---: |" * HEADER.count("|", 1))
    held = [await one_round(i + 1, args) for i in range(args.rounds)]
    print(f"targets held in {sum(held)}/{len(held)} rounds; load {os.getloadavg()[0]:.1f} at end")
    return 0 if all(held) else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
