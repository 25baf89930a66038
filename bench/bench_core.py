"""Core benchmarks: checkpoint size per thread, framework overhead, an embedded-model run.

Usage: .venv/bin/python bench/bench_core.py [--skip-llm]

1. Bytes per thread in SQLite after N tool iterations (10/50/100) for noema_graph's agent
   graph (delta channels) and for LangGraph's prebuilt ReAct agent, both on SqliteSaver
   with a scripted model, so only the framework's storage is measured.
2. Framework time per iteration: the same runs with a zero-latency scripted model.
3. One agent run on the embedded model: wall time split into model time (inside the chat
   model calls, measured by a callback) and framework time (the rest).
"""

from __future__ import annotations

import argparse
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noema_graph import AgentConfig, build_agent_graph, sqlite_checkpointer  # noqa: E402
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply  # noqa: E402


@tool
def mark(n: int) -> str:
    """Record n."""
    return f"marked {n} " + "x" * 200


def _db_bytes(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0)"
            " FROM checkpoints) + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
        ).fetchone()
    return int(row[0])


def _noema_run(db: Path, n: int) -> float:
    replies = [tools_reply(call("mark", {"n": i})) for i in range(n)]
    model = ScriptedChatModel(script=[plan_reply("loop"), *replies, text("done")])
    config = AgentConfig(
        enabled_toolkits=(),
        max_iterations=n + 2,
        reflection_interval=10_000,
        loop_threshold=10_000,
        price_overrides={"scripted": (0.0, 0.0)},
    )
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(config, model=model, tools=[mark], checkpointer=saver)
        start = time.perf_counter()
        graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "b"}})
        return time.perf_counter() - start


def _prebuilt_run(db: Path, n: int) -> float:
    from langgraph.prebuilt import create_react_agent

    replies = [tools_reply(call("mark", {"n": i})) for i in range(n)]
    model = ScriptedChatModel(script=[*replies, text("done")])
    with sqlite_checkpointer(db) as saver, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated; still the baseline
        graph = create_react_agent(model, [mark], checkpointer=saver)
        start = time.perf_counter()
        graph.invoke(
            {"messages": [("user", "go")]},
            {"configurable": {"thread_id": "b"}, "recursion_limit": 4 * n + 10},
        )
        return time.perf_counter() - start


def checkpoint_sizes() -> list[str]:
    rows = [
        "| iterations | noema_graph bytes | per iteration | prebuilt ReAct bytes | noema ms/iter |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    for n in (10, 50, 100):
        with tempfile.TemporaryDirectory() as tmp:
            ours, theirs = Path(tmp) / "ours.sqlite", Path(tmp) / "prebuilt.sqlite"
            seconds = _noema_run(ours, n)
            _prebuilt_run(theirs, n)
            size, other = _db_bytes(ours), _db_bytes(theirs)
        rows.append(f"| {n} | {size:,} | {size // n:,} | {other:,} | {1000 * seconds / n:.1f} |")
    return rows


class _ModelTimer(BaseCallbackHandler):
    """Add up wall time spent inside chat model calls."""

    def __init__(self) -> None:
        self.starts: dict[Any, float] = {}
        self.total = 0.0
        self.calls = 0

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, **kwargs: Any
    ) -> None:
        self.starts[run_id] = time.perf_counter()

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        if run_id in self.starts:
            self.total += time.perf_counter() - self.starts.pop(run_id)
            self.calls += 1


def local_run() -> list[str]:
    from noema_graph.models import make_model

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    model = make_model("local")
    config = AgentConfig(enabled_toolkits=(), max_iterations=4, reflection_interval=10)
    rows = [
        "| run | wall s | model s | model calls | framework s | framework share |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    shares = []
    for i in range(3):
        timer = _ModelTimer()
        graph = build_agent_graph(config, model=model, tools=[add])
        start = time.perf_counter()
        graph.invoke(
            {"messages": [("user", "Use the add tool to add 2 and 3.")]}, {"callbacks": [timer]}
        )
        wall = time.perf_counter() - start
        framework = wall - timer.total
        shares.append(framework / wall)
        rows.append(
            f"| {i + 1} | {wall:.2f} | {timer.total:.2f} | {timer.calls} | "
            f"{framework:.3f} | {100 * framework / wall:.1f}% |"
        )
    rows.append(f"\nMedian framework share: {100 * statistics.median(shares):.1f}%")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-llm", action="store_true")
    args = parser.parse_args()
    import langgraph.version

    print(
        f"Machine: {platform.machine()}, {platform.platform()}, "
        f"Python {platform.python_version()}, langgraph {langgraph.version.__version__}\n"
    )
    print("## Checkpoint bytes per thread (SQLite, scripted model)\n")
    print("\n".join(checkpoint_sizes()))
    if not args.skip_llm:
        print("\n## One agent run on the embedded model\n")
        print("\n".join(local_run()))


if __name__ == "__main__":
    main()
