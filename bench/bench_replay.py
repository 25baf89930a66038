"""Replay BFCL multi-turn tasks with stateful backends: does a message's call order survive?

Usage: PYTHONPATH=. .venv/bin/python bench/bench_replay.py [--tasks 200] [--paths sync,async]
       [--jitter-ms 1.0] [--show-failures]

Needs ``pip install --no-deps bfcl-eval==2026.3.23 mpmath`` (the tasks, gold calls and
backends are inside its wheel; nothing is downloaded at run time).

For each of the first N tasks of BFCL's ``multi_turn_base`` category, the gold calls are
replayed through ``build_agent_graph`` with a zero-latency scripted model, either one AI
message per gold call ("sequential") or one message per turn holding all of its calls
("batched", what capable models do), against fresh backends (file system, trading bot,
travel, messaging, ticketing, vehicle, math). The backends' end state is compared with a
direct in-order execution of the same calls (BFCL's state check: public attributes).
Tools are unsafe to run concurrently except read-only methods (``tests/replay.py``).

Each configuration runs once per path (``invoke``/``ainvoke``) and per backend latency:
"zero" (calls act at once) and "jitter" (each call waits a seeded uniform 0..jitter-ms
before it acts, as real backends take varying time). Batched below sequential means calls
that depend on each other ran in another order than the model sent them. With zero latency
concurrent calls often still finish in message order (the GIL hands the threads over in
turn), so that row varies from run to run (seen 176-200/200 sync, 142-199/200 async on
main); the jitter rows show the lost order reliably.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

try:
    import bfcl_eval  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError:
    sys.exit("bench_replay needs: pip install --no-deps bfcl-eval==2026.3.23 mpmath")

from tests.replay import (  # noqa: E402
    CATEGORY,
    Mode,
    Task,
    dependent_tasks,
    jitter_delay,
    load_tasks,
    state_diff,
)

MODES: tuple[Mode, ...] = ("sequential", "batched")


def _run(tasks: list[Task], mode: Mode, options: dict[str, Any]) -> tuple[list[str], float]:
    start = time.perf_counter()
    failed = [task.id for task in tasks if state_diff(task, mode, **options)]
    return failed, time.perf_counter() - start


def _paths(text: str) -> list[str]:
    paths = [part.strip() for part in text.split(",") if part.strip()]
    unknown = sorted(set(paths) - {"sync", "async"})
    if unknown or not paths:
        raise argparse.ArgumentTypeError(f"--paths {text!r}: choose from sync, async")
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200, help="first N tasks (max 200)")
    parser.add_argument("--paths", type=_paths, default=["sync", "async"])
    parser.add_argument("--jitter-ms", type=float, default=1.0, help="most latency per call")
    parser.add_argument("--show-failures", action="store_true", help="list mismatched tasks")
    args = parser.parse_args()
    if not 1 <= args.tasks <= 200:
        parser.error(f"--tasks {args.tasks}: choose 1..200")
    tasks = load_tasks(args.tasks)
    print(
        f"python {platform.python_version()}, langgraph {version('langgraph')}, "
        f"bfcl-eval {version('bfcl-eval')}; {CATEGORY}, {len(tasks)} tasks "
        f"({len(dependent_tasks(tasks))} with a turn of several calls, one state-changing)"
    )
    print("\n| path | backend latency | sequential | batched | seconds (seq / batched) |")
    print("| --- | --- | ---: | ---: | ---: |")
    latencies = {
        "zero": None,
        f"jitter 0..{args.jitter_ms:g} ms": jitter_delay(args.jitter_ms / 1000),
    }
    for path in args.paths:
        for label, delay in latencies.items():
            options = {"delay": delay, "use_async": path == "async"}
            results = {mode: _run(tasks, mode, options) for mode in MODES}
            cells = [f"{len(tasks) - len(results[m][0])}/{len(tasks)}" for m in MODES]
            seconds = " / ".join(f"{results[m][1]:.1f}" for m in MODES)
            print(f"| {path} | {label} | {cells[0]} | {cells[1]} | {seconds} |", flush=True)
            if args.show_failures:
                for mode in MODES:
                    if results[mode][0]:
                        print(f"  {mode} mismatches: {', '.join(results[mode][0])}")


if __name__ == "__main__":
    main()
