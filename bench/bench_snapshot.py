"""What the end-state check adds to an eval: the store comparison against each item's time.

    .venv/bin/python bench/bench_snapshot.py RESULTS.json [TIMES.json]

RESULTS.json is a results file written by ``noema-graph eval`` with this code (each
trajectory records ``snapshot_s``, the comparison's seconds, and ``wall_s``, the run's);
TIMES.json, when given, supplies ``wall_s`` per item from another run of the same items (a
real model's, when RESULTS.json replays it). Prints the sums, their ratio and the worst item.
Also times the comparison alone on the demo store, 20 times (unchanged and one row changed).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noema_graph.evals.state import store_changes
from noema_graph.noema import write_demo_data


def _walls(path: Path) -> dict[str, float]:
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return {k: float(t["metadata"]["wall_s"]) for k, t in report["trajectories"].items()}


def from_results(results: Path, times: Path | None) -> None:
    """Print the comparison's share of the items' time."""
    report: dict[str, Any] = json.loads(results.read_text(encoding="utf-8"))
    snaps = {k: float(t["metadata"]["snapshot_s"]) for k, t in report["trajectories"].items()}
    walls = _walls(times if times is not None else results)
    ids = sorted(set(snaps) & set(walls))
    snap, wall = sum(snaps[i] for i in ids), sum(walls[i] for i in ids)
    worst = max(ids, key=lambda i: snaps[i] / walls[i])
    print(f"items {len(ids)}: comparison {snap:.2f} s, runs {wall:.1f} s, share {snap / wall:.2%}")
    print(f"worst item {worst}: {snaps[worst]:.3f} s of {walls[worst]:.1f} s")


def alone() -> None:
    """Time the comparison alone on copies of the demo store."""
    with tempfile.TemporaryDirectory() as tmp:
        master = Path(tmp) / "demo.sqlite"
        write_demo_data(master)
        copy = Path(tmp) / "copy.sqlite"
        for label, change in (
            ("unchanged", None),
            ("one row changed", "UPDATE cards SET category_id = 2 WHERE id = 5"),
        ):
            shutil.copyfile(master, copy)
            if change:
                with sqlite3.connect(copy) as db:
                    db.execute(change)
            times = []
            for _ in range(20):
                started = time.perf_counter()
                store_changes(copy, master)
                times.append(time.perf_counter() - started)
            print(f"comparison alone, {label}: median {statistics.median(times) * 1000:.1f} ms")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        from_results(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    alone()
