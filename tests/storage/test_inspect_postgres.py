"""``threads(url)``, ``history(url)`` and ``checkpoint(url)`` on a real PostgreSQL database.

Two ways a PostgreSQL thread is read: checkpoints written through ``open_backend`` carry the
run summary in their metadata (:mod:`noema_graph.storage.postgres.savers`) and are listed without
decoding
a blob; checkpoints of a stock ``PostgresSaver`` (a server's, an older noema-graph) have none
and are decoded, their output contract read from ``finalize``'s write. Both give the rows the
saver's ``list()`` gives, a failed run's message included, and a run whose process was killed
is listed failed, as on SQLite.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from noema_graph import build_agent_graph, open_backend
from noema_graph.inspect import SUMMARY_KEY, athreads, checkpoint, history, threads
from noema_graph.persistence import serializer
from tests.helpers import TOOLS, cfg
from tests.scripted import call, plan_reply, text, tools_reply

ROOT = Path(__file__).resolve().parents[2]


def _failing(saver: Any, scripted: Any, thread: str) -> Any:
    """Run a thread that stops on its iteration limit (a failed run with a message)."""
    model = scripted(plan_reply("add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")))
    graph = build_agent_graph(cfg(max_iterations=1), model=model, tools=TOOLS, checkpointer=saver)
    config: Any = {"configurable": {"thread_id": thread}}
    graph.invoke({"messages": [("user", "add")]}, config)
    return graph.get_state(config).values["output"]["error"]


def _succeeding(saver: Any, scripted: Any, thread: str) -> None:
    model = scripted(plan_reply("add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")), text("3"))
    graph = build_agent_graph(cfg(), model=model, tools=TOOLS, checkpointer=saver)
    graph.invoke({"messages": [("user", "add")]}, {"configurable": {"thread_id": thread}})


def test_a_stock_saver_without_summaries_is_read_like_its_list(pg_url: str, scripted: Any) -> None:
    with psycopg.connect(pg_url, autocommit=True, row_factory=dict_row) as conn:
        saver = PostgresSaver(conn, serde=serializer())  # type: ignore[arg-type]  # dict rows
        saver.setup()
        error = _failing(saver, scripted, "failed")
        _succeeding(saver, scripted, "done")
        listed, histories = threads(saver), {t: history(saver, t) for t in ("failed", "done")}
        metadata = next(saver.list(None)).metadata
    assert SUMMARY_KEY not in metadata  # the decoding path is the one under test
    by_url = threads(pg_url)
    assert by_url == listed == asyncio.run(athreads(pg_url))
    assert {(r.thread_id, r.status, r.last_error) for r in by_url} == {
        ("failed", "failed", f"{error['code']}: {error['message']}"),
        ("done", "done", None),
    }
    for thread, rows in histories.items():
        assert history(pg_url, thread) == rows
    assert checkpoint(pg_url, "done")["output"]["result"] == "3"


def test_backend_savers_write_the_summary_and_list_the_same(pg_url: str, scripted: Any) -> None:
    with open_backend(pg_url) as backend:
        error = _failing(backend.checkpointer, scripted, "failed")
        listed, rows = threads(backend.checkpointer), history(backend.checkpointer, "failed")
        metadata = next(backend.checkpointer.list(None)).metadata
    assert metadata[SUMMARY_KEY]["status"] == "failed"
    (row,) = threads(pg_url)
    assert row == listed[0] and row.last_error == f"{error['code']}: {error['message']}"
    assert history(pg_url, "failed") == rows


def test_a_run_killed_mid_tool_is_listed_failed(pg_url: str, tmp_path: Path) -> None:
    mark = tmp_path / "in_flight"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NOEMA_TEST_SLEEP": "120",
        "NOEMA_TEST_MARK": str(mark),
    }
    command = ["run", "--database-url", pg_url, "--thread", "k1", "go"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.cli.launch", "slow", *command],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not mark.exists():  # the tool started: the run hangs inside it
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    (alive,) = threads(pg_url)
    assert (alive.thread_id, alive.status) == ("k1", "running")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (row,) = threads(pg_url)
    assert (row.status, row.last_error) == (
        "failed",
        f"process {proc.pid} ended without finishing (killed?)",
    )
