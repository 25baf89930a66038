"""Per-iteration framework cost of noema_graph as ratios against LangGraph's prebuilt agent.

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_ratio.py [--runs 5] [--quick]
        [--scenarios plain,compaction,threads,sqlite,async] [--sizes 10,200,1000]
        [--out results.json]
    PYTHONPATH=$PWD .venv/bin/python bench/bench_ratio.py --profile 200 [--profile-sqlite]

Both agents get the same zero-latency scripted chat model (``bench/zero_latency.py``: N
replies that each call a 1 KB tool, then a final answer) and the same tool, so the wall
time of a run is framework time only; per-iteration cost = run wall time / N. noema_graph
is built through its public API (``build_agent_graph(config, model=, tools=,
checkpointer=)``) with reflection and loop detection out of reach, so its run is: plan (one
structured-output call), N tool iterations, the answer. The model reports a 128k context
window (gpt-4o's), so noema sends the whole history every step as the prebuilt agent does;
the ``compaction`` row shows noema at its default window for an unknown model (8k tokens),
where it compacts the prompt every step after about 25 iterations. The baseline is
``langgraph.prebuilt.create_react_agent`` (deprecated since langgraph 1.0 in favour of
``langchain.agents.create_agent``, which is not installed here; the issue measured
create_react_agent). Each side runs in its default configuration (noema: durability "sync"
and the event log beside SQLite checkpoints; prebuilt: durability "async").

The machine is shared and noisy, so both sides are measured in one process, interleaved
(the order rotates every repetition), and the table reports the ratio of the medians.
Graph building, checkpointer opening and ``setup()`` are outside the timed part; one
untimed warm-up run of each side precedes every scenario. Each run is timed by the wall
clock (the figures and "ratio") and by the CPU time of the whole process, all threads
(``time.process_time``; "CPU ratio"): on a loaded machine the wall ratio swings with the
scheduler (each side hands work between threads differently), the CPU ratio much less,
but it leaves out time spent waiting, such as SQLite's fsync.

Scenarios:
    plain       no checkpointer, N = 10, 50, 200 (``invoke``); once more with noema's time
                budget off (``timeout_s=None``), which shows what the budget's watchdog
                thread costs (see "no budget" in bench/RESULTS.md)
    compaction  no checkpointer, N = 200, noema at its default 8k window
    threads     16 concurrent runs (ThreadPoolExecutor, one graph and model per run),
                N = 50, no checkpointer; per iteration = batch wall time / (16 x N)
    sqlite      N = 200; noema on its ``sqlite_checkpointer`` (with its event log, and
                once with the event log off) vs prebuilt on a stock
                ``SqliteSaver(sqlite3.connect(path, check_same_thread=False))`` and on a
                connection with noema's settings (``noema_graph.persistence.connect``:
                WAL, busy timeout, synchronous=NORMAL, autocommit)
    async       N = 200, ``ainvoke``; noema on ``async_sqlite_checkpointer`` vs prebuilt
                on a stock ``AsyncSqliteSaver(aiosqlite.connect(path))``
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import platform
import pstats
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import aiosqlite  # noqa: E402
from langchain_core.messages import ToolMessage  # noqa: E402
from langgraph.checkpoint.base import BaseCheckpointSaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402
from langgraph.warnings import LangGraphDeprecatedSinceV10  # noqa: E402
from zero_latency import WIDE_WINDOW, ZeroLatencyChatModel, fetch, noema_config, script  # noqa: E402

from noema_graph import (  # noqa: E402
    async_sqlite_checkpointer,
    build_agent_graph,
    persistence,
    sqlite_checkpointer,
)
from noema_graph.observability import Observer  # noqa: E402

warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)

THREADS = 16
SCENARIOS = ("plain", "compaction", "threads", "sqlite", "async")
INPUT = {"messages": [("user", "Fetch the records.")]}


class Sample(NamedTuple):
    """Seconds one timed call took: wall clock, and CPU time of the whole process."""

    wall: float
    cpu: float


Run = Callable[[int], Sample]
"""Set up one agent run of N iterations, time it, check it; return its seconds."""


@contextmanager
def _clock(into: list[Sample]) -> Iterator[None]:
    """Append the wall and process CPU seconds of the block to ``into`` (after a GC)."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    yield
    into.append(Sample(time.perf_counter() - wall, time.process_time() - cpu))


def _noema(
    n: int,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    observer: Observer | None = None,
    *,
    context_window: int | None = WIDE_WINDOW,
    time_budget: bool = True,
) -> tuple[Any, ZeroLatencyChatModel]:
    model = script(n, plan=True, context_window=context_window)
    config = noema_config(n)
    if not time_budget:
        config = config.model_copy(update={"timeout_s": None})
    graph = build_agent_graph(
        config, model=model, tools=[fetch], checkpointer=checkpointer, observer=observer
    )
    return graph, model


def _prebuilt(
    n: int, checkpointer: BaseCheckpointSaver[Any] | None = None
) -> tuple[Any, ZeroLatencyChatModel]:
    model = script(n, plan=False)
    return create_react_agent(model, [fetch], checkpointer=checkpointer), model


def _run_config(graph: Any, n: int) -> dict[str, Any]:
    config: dict[str, Any] = {"configurable": {"thread_id": "bench"}}
    if "recursion_limit" not in (getattr(graph, "config", None) or {}):
        # noema sets its own limit; the prebuilt agent takes 2 supersteps an iteration
        config["recursion_limit"] = 2 * n + 10
    return config


def _check(result: dict[str, Any], model: ZeroLatencyChatModel, n: int) -> None:
    """Fail loudly unless the run made exactly N tool calls and used the whole script."""
    calls = sum(isinstance(m, ToolMessage) for m in result["messages"])
    output = result.get("output")
    if model.remaining or calls != n or (output is not None and not output.get("success")):
        raise AssertionError(
            f"run did not do N={n} iterations: {calls} tool results, "
            f"{model.remaining} scripted replies unused, output {output!r:.300}"
        )


def _timed(graph: Any, model: ZeroLatencyChatModel, n: int) -> Sample:
    config, took = _run_config(graph, n), []
    with _clock(took):
        result = graph.invoke(INPUT, config)
    _check(result, model, n)
    return took[0]


async def _atimed(graph: Any, model: ZeroLatencyChatModel, n: int) -> Sample:
    config, took = _run_config(graph, n), []
    with _clock(took):
        result = await graph.ainvoke(INPUT, config)
    _check(result, model, n)
    return took[0]


# -- runs without a checkpointer ---------------------------------------------------------


def noema_plain(n: int) -> Sample:
    return _timed(*_noema(n), n)


def noema_plain_no_budget(n: int) -> Sample:
    return _timed(*_noema(n, time_budget=False), n)


def noema_plain_default_window(n: int) -> Sample:
    return _timed(*_noema(n, context_window=None), n)


def prebuilt_plain(n: int) -> Sample:
    return _timed(*_prebuilt(n), n)


def _concurrently(built: list[tuple[Any, ZeroLatencyChatModel]], n: int) -> Sample:
    def one(pair: tuple[Any, ZeroLatencyChatModel]) -> None:
        graph, model = pair
        _check(graph.invoke(INPUT, _run_config(graph, n)), model, n)

    took: list[Sample] = []
    with ThreadPoolExecutor(max_workers=len(built)) as pool, _clock(took):
        for future in [pool.submit(one, pair) for pair in built]:
            future.result()
    return took[0]


def noema_threads(n: int) -> Sample:
    return _concurrently([_noema(n) for _ in range(THREADS)], n)


def prebuilt_threads(n: int) -> Sample:
    return _concurrently([_prebuilt(n) for _ in range(THREADS)], n)


# -- SQLite ------------------------------------------------------------------------------


@contextmanager
def _db() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="bench-ratio-") as tmp:
        yield Path(tmp) / "checkpoints.sqlite"


def quiet_observer() -> Observer | None:
    """Return an observer that writes no event log, or None if the API has no such switch."""
    try:
        return Observer(auto_event_log=False)
    except TypeError:
        return None


def noema_sqlite(n: int) -> Sample:
    with _db() as path, sqlite_checkpointer(path) as saver:
        return _timed(*_noema(n, saver), n)


def noema_sqlite_no_event_log(n: int) -> Sample:
    with _db() as path, sqlite_checkpointer(path) as saver:
        return _timed(*_noema(n, saver, quiet_observer()), n)


def _prebuilt_on(conn: sqlite3.Connection, n: int) -> Sample:
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        return _timed(*_prebuilt(n, saver), n)
    finally:
        conn.close()


def prebuilt_sqlite_stock(n: int) -> Sample:
    with _db() as path:
        return _prebuilt_on(sqlite3.connect(path, check_same_thread=False), n)


def prebuilt_sqlite_tuned(n: int) -> Sample:
    with _db() as path:
        return _prebuilt_on(persistence.connect(path), n)


def noema_async_sqlite(n: int) -> Sample:
    async def go(path: Path) -> Sample:
        async with async_sqlite_checkpointer(path) as saver:
            return await _atimed(*_noema(n, saver), n)

    with _db() as path:
        return asyncio.run(go(path))


def prebuilt_async_sqlite(n: int) -> Sample:
    async def go(path: Path) -> Sample:
        conn = await aiosqlite.connect(path)
        try:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            return await _atimed(*_prebuilt(n, saver), n)
        finally:
            await conn.close()

    with _db() as path:
        return asyncio.run(go(path))


# -- measurement -------------------------------------------------------------------------


@dataclass(frozen=True)
class Group:
    """Runs measured together, interleaved, and the ratios reported between them."""

    scenario: str
    n: int
    runs: dict[str, Run]
    rows: tuple[tuple[str, str, str, str], ...]
    """(label, noema run name, prebuilt run name, target) of each table row."""
    batch: int = 1
    """Concurrent runs of N iterations in one timed call."""


@dataclass
class Row:
    """Per-iteration milliseconds of a noema run and a prebuilt run, and their ratio."""

    scenario: str
    label: str
    n: int
    target: str
    noema: str
    prebuilt: str
    noema_ms: list[float]
    prebuilt_ms: list[float]
    noema_cpu_ms: list[float]
    prebuilt_cpu_ms: list[float]

    @property
    def ratio(self) -> float:
        return statistics.median(self.noema_ms) / statistics.median(self.prebuilt_ms)

    @property
    def cpu_ratio(self) -> float:
        return statistics.median(self.noema_cpu_ms) / statistics.median(self.prebuilt_cpu_ms)

    def line(self) -> str:
        def cell(samples: list[float]) -> str:
            median = statistics.median(samples)
            return f"{median:.2f} ({min(samples):.2f}-{max(samples):.2f})"

        return (
            f"| {self.label} | {self.n} | {cell(self.noema_ms)} | {cell(self.prebuilt_ms)} "
            f"| **{self.ratio:.2f}x** | {self.cpu_ratio:.2f}x | {self.target} |"
        )


HEADER = (
    "| scenario | N | noema ms/iter, median (min-max) | prebuilt ms/iter, median (min-max) "
    "| ratio | CPU ratio | target |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |"
)
INFO = "-"
PLAIN_ROW = ("no checkpointer", "noema", "prebuilt", "<= 1.2x")
NO_BUDGET_ROW = ("no checkpointer, noema without a time budget", "no budget", "prebuilt", INFO)
"""noema with ``timeout_s=None``: its model calls then run on the calling thread, as the
prebuilt agent's do (with a time budget, a blocking model call runs on a worker thread that
the run stops waiting for at the deadline)."""


def _sqlite_group(n: int) -> Group:
    runs: dict[str, Run] = {
        "noema": noema_sqlite,
        "prebuilt stock": prebuilt_sqlite_stock,
        "prebuilt tuned": prebuilt_sqlite_tuned,
    }
    rows = [
        ("SQLite: noema vs stock SqliteSaver", "noema", "prebuilt stock", "<= 0.4x"),
        ("SQLite: noema vs prebuilt on noema's settings", "noema", "prebuilt tuned", "<= 0.8x"),
    ]
    if quiet_observer() is not None:
        runs["noema no event log"] = noema_sqlite_no_event_log
        quiet = "noema no event log"
        rows += [
            ("SQLite, noema event log off: vs stock", quiet, "prebuilt stock", INFO),
            ("SQLite, noema event log off: vs noema's settings", quiet, "prebuilt tuned", INFO),
        ]
    else:
        print("Observer(auto_event_log=False) is gone: the event-log-off rows are skipped")
    return Group("sqlite", n, runs, tuple(rows))


def groups(quick: bool, scenarios: set[str], sizes: tuple[int, ...] = ()) -> list[Group]:
    big = 50 if quick else 200
    chosen: list[Group] = []
    if "plain" in scenarios:
        runs: dict[str, Run] = {
            "noema": noema_plain,
            "prebuilt": prebuilt_plain,
            "no budget": noema_plain_no_budget,
        }
        chosen += [
            Group("plain", n, runs, (PLAIN_ROW, NO_BUDGET_ROW))
            for n in (sizes or ((10, 50) if quick else (10, 50, 200)))
        ]
    if "compaction" in scenarios:
        runs = {"noema 8k": noema_plain_default_window, "prebuilt": prebuilt_plain}
        label = "no checkpointer, noema at its default 8k window (compacts)"
        chosen.append(Group("compaction", big, runs, ((label, "noema 8k", "prebuilt", INFO),)))
    if "threads" in scenarios:
        runs = {"noema": noema_threads, "prebuilt": prebuilt_threads}
        label = f"{THREADS} threads, no checkpointer"
        row = (label, "noema", "prebuilt", "<= 1.2x")
        chosen.append(Group("threads", 10 if quick else 50, runs, (row,), batch=THREADS))
    if "sqlite" in scenarios:
        chosen.append(_sqlite_group(big))
    if "async" in scenarios:
        runs = {"noema": noema_async_sqlite, "prebuilt": prebuilt_async_sqlite}
        row = ("async SQLite (ainvoke, aiosqlite, stock)", "noema", "prebuilt", INFO)
        chosen.append(Group("async", big, runs, (row,)))
    return chosen


def measure(group: Group, repetitions: int) -> list[Row]:
    """Warm every run up once, then time each ``repetitions`` times in rotating order."""
    names = list(group.runs)
    for name in names:
        group.runs[name](min(group.n, 10))
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for repetition in range(repetitions):
        shift = repetition % len(names)
        for name in names[shift:] + names[:shift]:
            sample = group.runs[name](group.n)
            wall[name].append(1000 * sample.wall / (group.n * group.batch))
            cpu[name].append(1000 * sample.cpu / (group.n * group.batch))
    return [
        Row(
            group.scenario,
            label,
            group.n,
            target,
            ours,
            theirs,
            wall[ours],
            wall[theirs],
            cpu[ours],
            cpu[theirs],
        )
        for label, ours, theirs, target in group.rows
    ]


def _environment(runs: int) -> dict[str, Any]:
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "python": platform.python_version(),
        "langgraph": version("langgraph"),
        "langgraph-prebuilt": version("langgraph-prebuilt"),
        "langgraph-checkpoint-sqlite": version("langgraph-checkpoint-sqlite"),
        "langchain-core": version("langchain-core"),
        "noema_graph commit": commit,
        "runs": runs,
        "load average at start": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def profile(n: int, *, sqlite: bool, sort: str, top: int = 25) -> None:
    """Run one noema run of N iterations under cProfile and print the top functions."""
    (noema_sqlite if sqlite else noema_plain)(10)  # warm-up: imports, caches
    profiler = cProfile.Profile()

    def profiled(saver: BaseCheckpointSaver[Any] | None) -> float:
        graph, model = _noema(n, saver)
        config = _run_config(graph, n)
        gc.collect()
        start = time.perf_counter()
        result = profiler.runcall(graph.invoke, INPUT, config)
        seconds = time.perf_counter() - start
        _check(result, model, n)
        return seconds

    if sqlite:
        with _db() as path, sqlite_checkpointer(path) as saver:
            seconds = profiled(saver)
    else:
        seconds = profiled(None)
    where = "SQLite checkpointer" if sqlite else "no checkpointer"
    print(f"## cProfile: one noema run, N={n}, {where}: {seconds:.2f} s under the profiler\n")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs().sort_stats(sort).print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="repetitions of each side (5)")
    parser.add_argument("--quick", action="store_true", help="1 run, N <= 50, a smoke test")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated subset")
    parser.add_argument(
        "--sizes", default="", help="iteration counts of the plain scenario (10,50,200)"
    )
    parser.add_argument("--out", type=Path, help="write the samples and ratios as JSON here")
    parser.add_argument("--profile", type=int, metavar="N", help="profile one noema run")
    parser.add_argument("--profile-sqlite", action="store_true", help="profile on SQLite")
    parser.add_argument("--profile-sort", default="cumulative", choices=["cumulative", "tottime"])
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, sqlite=args.profile_sqlite, sort=args.profile_sort)
        return
    scenarios = set(args.scenarios.split(","))
    unknown = scenarios - set(SCENARIOS)
    if unknown or args.runs < 1:
        parser.error(
            f"bad --scenarios {sorted(unknown)} (choose from {', '.join(SCENARIOS)})"
            if unknown
            else f"--runs must be >= 1, got {args.runs}"
        )
    runs = 1 if args.quick else args.runs
    env = _environment(runs)
    print(", ".join(f"{k}: {v}" for k, v in env.items()) + "\n")
    print(HEADER, flush=True)
    rows: list[Row] = []
    try:
        sizes = tuple(int(n) for n in args.sizes.split(",") if n.strip())
    except ValueError:
        parser.error(f"--sizes takes comma-separated iteration counts, got {args.sizes!r}")
    for group in groups(args.quick, scenarios, sizes):
        measured = measure(group, runs)
        print("\n".join(r.line() for r in measured), flush=True)
        rows += measured
    print(f"\nload average at end: {os.getloadavg()}")
    if args.out:
        data = {
            "environment": env,
            "rows": [{**asdict(r), "ratio": r.ratio, "cpu_ratio": r.cpu_ratio} for r in rows],
        }
        args.out.write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
