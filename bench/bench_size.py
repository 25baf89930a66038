"""Checkpoint file size of one thread, where the bytes go, and get_state_history time.

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_size.py [--iterations 10,50,200,1000]
        [--breakdown] [--history 200] [--prune] [--payload filler|text]

Both agents get the zero-latency scripted model and 1 KB tool of ``bench/zero_latency.py``.
noema_graph runs on ``sqlite_checkpointer`` (event log on, its default), once in each
format: ``compact=True`` and the default stock format (the breakdown, prune and history
figures are the stock file's); the prebuilt agent
(``create_react_agent``) on a stock ``SqliteSaver(sqlite3.connect(path))``.

For each N and format: the file size after ``VACUUM`` and bytes per iteration (growth is linear when
bytes/iteration stays flat as N grows). ``--breakdown`` prints bytes per table and, inside
the checkpoints table, per channel (each channel value re-serialised on its own) and per
channel of the writes table. ``--history N`` times ``graph.get_state_history`` of both
agents' N-iteration threads, interleaved in one process (median of 3 after a warm-up).
``--prune`` runs ``prune(keep_last=1)`` on both files and prints the sizes. ``--payload
text`` makes the tool return random words instead of the filler (which compresses ~30x, and
noema's SQLite checkpointer compresses large values): the honest size figure.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.prebuilt import create_react_agent  # noqa: E402
from langgraph.warnings import LangGraphDeprecatedSinceV10  # noqa: E402
from zero_latency import WIDE_WINDOW, fetch, fetch_text, noema_config, script  # noqa: E402

from noema_graph import build_agent_graph, sqlite_checkpointer  # noqa: E402
from noema_graph.persistence import prune, serializer  # noqa: E402

warnings.filterwarnings("ignore", category=LangGraphDeprecatedSinceV10)
INPUT = {"messages": [("user", "Fetch the records.")]}
CONFIG: Any = {"configurable": {"thread_id": "size"}}
TOOLS: dict[str, Any] = {"filler": fetch, "text": fetch_text}
TOOL: list[Any] = [fetch]
"""The tool both agents call (``--payload`` picks it)."""


def noema_thread(path: Path, n: int, compact: bool = False) -> None:
    """Run one noema thread of N iterations into ``path`` (stock format, or compact)."""
    with sqlite_checkpointer(path, compact=compact) as saver:
        model = script(n, plan=True, context_window=WIDE_WINDOW)
        graph = build_agent_graph(noema_config(n), model=model, tools=TOOL, checkpointer=saver)
        graph.invoke(INPUT, CONFIG)


def prebuilt_thread(path: Path, n: int) -> None:
    """Run one prebuilt-agent thread of N iterations into ``path`` (stock SqliteSaver)."""
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    graph = create_react_agent(script(n, plan=False), TOOL, checkpointer=saver)
    graph.invoke(INPUT, {**CONFIG, "recursion_limit": 2 * n + 10})
    conn.close()


def vacuumed(path: Path) -> int:
    """Return the file size of ``path`` after VACUUM (WAL checkpointed first)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def breakdown(path: Path) -> None:
    """Print bytes per table and per channel of the checkpoints and writes tables."""
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        total = " + ".join(f"COALESCE(length({c}), 0)" for c in cols)
        rows, size = conn.execute(f"SELECT count(*), sum({total}) FROM {table}").fetchone()
        print(f"  table {table}: {rows} rows, {size or 0:,} B")
    serde = serializer()
    per_channel: Counter[str] = Counter()
    meta = 0
    for kind, blob, metadata in conn.execute("SELECT type, checkpoint, metadata FROM checkpoints"):
        checkpoint = serde.loads_typed((kind, blob))
        meta += len(metadata or b"")
        for key, value in checkpoint["channel_values"].items():
            per_channel[key] += len(serde.dumps_typed(value)[1])
        rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        per_channel["<versions etc>"] += len(serde.dumps_typed(rest)[1])
    print(f"  checkpoints.metadata: {meta:,} B")
    for key, size in per_channel.most_common(12):
        print(f"  checkpoints channel {key}: {size:,} B")
    query = "SELECT channel, count(*), sum(length(value)) FROM writes GROUP BY channel"
    for channel, rows, size in sorted(conn.execute(query), key=lambda r: -(r[2] or 0))[:12]:
        print(f"  writes channel {channel}: {rows} rows, {size or 0:,} B")
    conn.close()


def history_seconds(path: Path, n: int, noema: bool) -> float:
    """Time one ``get_state_history`` of the thread in ``path`` (graph built as it ran)."""
    if noema:
        with sqlite_checkpointer(path) as saver:
            model = script(n, plan=True, context_window=WIDE_WINDOW)
            graph = build_agent_graph(noema_config(n), model=model, tools=TOOL, checkpointer=saver)
            start = time.perf_counter()
            count = len(list(graph.get_state_history(CONFIG)))
            took = time.perf_counter() - start
    else:
        conn = sqlite3.connect(path, check_same_thread=False)
        graph = create_react_agent(script(n, plan=False), TOOL, checkpointer=SqliteSaver(conn))
        start = time.perf_counter()
        count = len(list(graph.get_state_history(CONFIG)))
        took = time.perf_counter() - start
        conn.close()
    assert count > n, f"history of {count} states for N={n}"
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", default="10,50,200")
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument("--history", type=int, default=0)
    parser.add_argument("--prune", action="store_true")
    parser.add_argument("--prebuilt-size", action="store_true")
    parser.add_argument("--payload", choices=sorted(TOOLS), default="filler")
    args = parser.parse_args()
    TOOL[0] = TOOLS[args.payload]
    print(f"tool result: {args.payload}")
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.iterations.split(",") if x]:
            path = Path(tmp) / f"noema-{n}.sqlite"
            for compact in (True, False):
                where = path.with_suffix(".compact") if compact else path
                start = time.perf_counter()
                noema_thread(where, n, compact)
                took = time.perf_counter() - start
                size = vacuumed(where)
                print(
                    f"noema {'compact' if compact else 'stock'} N={n}: {size:,} B after VACUUM, "
                    f"{size / n:,.0f} B/iteration ({took:.1f} s)"
                )
            if args.breakdown:
                breakdown(path)
            if args.prebuilt_size:
                other = Path(tmp) / f"prebuilt-{n}.sqlite"
                prebuilt_thread(other, n)
                print(f"prebuilt N={n}: {vacuumed(other):,} B after VACUUM")
            if args.prune:
                other = Path(tmp) / f"prebuilt-{n}.sqlite"
                if not other.exists():
                    prebuilt_thread(other, n)
                prune(path, keep_last=1)
                prune(other, keep_last=1)
                print(
                    f"after prune(keep_last=1), N={n}: noema {path.stat().st_size:,} B, "
                    f"prebuilt {other.stat().st_size:,} B"
                )
        if args.history:
            n = args.history
            ours, theirs = Path(tmp) / "h-noema.sqlite", Path(tmp) / "h-prebuilt.sqlite"
            noema_thread(ours, n)
            prebuilt_thread(theirs, n)
            times: dict[bool, list[float]] = {True: [], False: []}
            for rep in range(4):
                for side in (True, False) if rep % 2 else (False, True):
                    took = history_seconds(ours if side else theirs, n, side)
                    if rep:
                        times[side].append(took)
            a, b = statistics.median(times[True]), statistics.median(times[False])
            print(
                f"get_state_history N={n}: noema {a:.2f} s, prebuilt {b:.2f} s, "
                f"ratio {a / b:.2f}x (median of 3, interleaved)"
            )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
