"""Inspection benchmarks: history() of a 200-iteration thread, threads() over 1,000 threads.

Usage: PYTHONPATH=. .venv/bin/python bench/bench_inspect.py [--iterations 200] [--threads 1000]

1. One agent thread of N tool iterations (scripted model, 200-byte tool result) on SqliteSaver;
   time ``history(saver, thread)`` (SQL over the checkpoints table, each small checkpoint blob
   decoded, no delta replay) against ``graph.get_state_history`` (full states).
2. The same with the run summary written into checkpoint metadata (no blob decoded).
3. A 10-iteration thread copied under M thread ids with SQL (real rows, no M agent runs);
   time ``threads(path)`` (one query for the latest checkpoint per thread).
Each figure is the median of 5 runs after one warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from noema_graph import AgentConfig, build_agent_graph, sqlite_checkpointer  # noqa: E402
from noema_graph.inspect import SUMMARY_KEY, history, run_summary, threads  # noqa: E402
from noema_graph.persistence import connect, serializer  # noqa: E402
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from bench_core import mark  # noqa: E402


def _ms(fn: Callable[[], Any]) -> float:
    fn()
    times: list[float] = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _graph(saver: Any, n: int) -> Any:
    replies = [tools_reply(call("mark", {"n": i})) for i in range(n)]
    model = ScriptedChatModel(script=[plan_reply("loop"), *replies, text("done")])
    config = AgentConfig(
        enabled_toolkits=(),
        max_iterations=n + 2,
        reflection_interval=10_000,
        loop_threshold=10_000,
        price_overrides={"scripted": (0.0, 0.0)},
    )
    return build_agent_graph(config, model=model, tools=[mark], checkpointer=saver)


def bench_history(db: Path, n: int) -> None:
    with sqlite_checkpointer(db) as saver:
        graph = _graph(saver, n)
        config: Any = {"configurable": {"thread_id": "long"}}
        graph.invoke({"messages": [("user", "go")]}, config)
        rows = len(history(saver, "long"))
        fast = _ms(lambda: history(saver, "long"))
        start = time.perf_counter()
        full = len(list(graph.get_state_history(config)))
        slow = (time.perf_counter() - start) * 1000
    print(f"history() of a {n}-iteration thread ({rows} checkpoints): {fast:.1f} ms")
    print(f"graph.get_state_history of the same thread ({full} states, 1 run): {slow:.0f} ms")


class SummarySaver(SqliteSaver):
    """Writes run_summary into each checkpoint's metadata, as the core is asked to."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        summary = run_summary(checkpoint["channel_values"])
        return super().put(config, checkpoint, {**metadata, SUMMARY_KEY: summary}, new_versions)


def bench_history_from_metadata(db: Path, n: int) -> None:
    conn = connect(db)
    saver = SummarySaver(conn, serde=serializer())
    saver.setup()
    _graph(saver, n).invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "m"}})
    took = _ms(lambda: history(saver, "m"))
    conn.close()
    print(
        f"history() of a {n}-iteration thread, summary in metadata (no blob decoded): {took:.1f} ms"
    )


def bench_threads(db: Path, count: int) -> None:
    with sqlite_checkpointer(db) as saver:
        _graph(saver, 10).invoke(
            {"messages": [("user", "go")]}, {"configurable": {"thread_id": "t0"}}
        )
    conn = connect(db)
    for i in range(1, count):
        conn.execute(
            "INSERT INTO checkpoints SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id,"
            " type, checkpoint, metadata FROM checkpoints WHERE thread_id = 't0'",
            (f"t{i}",),
        )
        conn.execute(
            "INSERT INTO writes SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx,"
            " channel, type, value FROM writes WHERE thread_id = 't0'",
            (f"t{i}",),
        )
    conn.close()
    listed = len(threads(db))
    took = _ms(lambda: threads(db))
    print(f"threads() over {listed} threads (10 iterations each), from a path: {took:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_history(Path(tmp) / "long.sqlite", args.iterations)
        bench_history_from_metadata(Path(tmp) / "summary.sqlite", args.iterations)
        bench_threads(Path(tmp) / "many.sqlite", args.threads)


if __name__ == "__main__":
    main()
