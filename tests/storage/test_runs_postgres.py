"""Agent runs checkpointed in a real PostgreSQL: pause and resume across processes, the ledger.

Each step runs in its own process (:mod:`tests.storage.pg_agent`) with its own backend, so a
resume reads only what PostgreSQL holds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import ToolMessage

from noema_graph import build_agent_graph, open_async_backend, open_backend
from noema_graph.effects import adrive
from noema_graph.storage.ledger import aentries, claim, entries, settle
from tests.helpers import cfg
from tests.scripted import call, plan_reply, text, tools_reply
from tests.storage.crash_agent import answered_calls, wait_mid_tool
from tests.storage.pg_agent import make_mark

ROOT = Path(__file__).resolve().parents[2]


def _step(url: str, thread: str, step: str, mode: str, marks: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tests.storage.pg_agent", url, thread, step, mode, str(marks)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


SAVED_ANSWERS = (
    "SELECT w.type, w.blob FROM checkpoint_writes w JOIN checkpoints c"
    " USING (thread_id, checkpoint_ns, checkpoint_id)"
    " WHERE w.thread_id = %s AND w.channel = 'messages'"
)


def _saved_answers(url: str, thread: str) -> set[str]:
    """Return the calls of ``thread`` whose answers PostgreSQL holds, with their checkpoint."""
    with psycopg.connect(url) as conn:
        try:
            rows = conn.execute(SAVED_ANSWERS, (thread,)).fetchall()
        except psycopg.errors.UndefinedTable:  # the saver has not created its tables yet
            return set()
    return answered_calls((kind, bytes(blob)) for kind, blob in rows)


def _count(url: str, table: str, thread: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(f"SELECT count(*) FROM {table} WHERE thread_id = %s", (thread,))
        return int(row.fetchone()[0])  # type: ignore[index]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_paused_run_resumes_in_a_new_process(pg_url: str, tmp_path: Path, mode: str) -> None:
    marks = tmp_path / "marks.txt"
    paused = _step(pg_url, "p1", "pause", mode, marks)
    assert 'paused: ["mark"]' in paused and not marks.exists()  # waits for the approval
    checkpoints = _count(pg_url, "checkpoints", "p1")
    assert checkpoints > 0

    output = json.loads(_step(pg_url, "p1", "resume", mode, marks).splitlines()[-1])
    assert output["success"] and output["result"] == "marked 1"
    assert marks.read_text() == "1\n"  # approved, ran once
    assert _count(pg_url, "checkpoints", "p1") > checkpoints
    with open_backend(pg_url) as backend:
        assert entries(backend.store, "p1") == {"c1": "done"}


def test_a_crash_mid_call_is_not_repeated_on_resume(
    pg_url: str, tmp_path: Path, scripted: Any
) -> None:
    """SIGKILL while a non-idempotent call runs: resume refuses to run it a second time."""
    marks = tmp_path / "marks.txt"
    args = [sys.executable, "-m", "tests.storage.pg_agent", pg_url, "k1", "crash", "sync"]
    proc = subprocess.Popen([*args, str(marks)], cwd=ROOT, stderr=subprocess.PIPE)
    # c3 hangs; the concurrent call c2 has finished and its answer reached PostgreSQL
    wait_mid_tool(proc, tmp_path / "in_flight", lambda: _saved_answers(pg_url, "k1"))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert marks.read_text() == "1\n2\n"

    with open_backend(pg_url) as backend:
        graph = build_agent_graph(
            cfg(),
            model=scripted(text("c3 needs checking")),
            tools=[make_mark(marks)],
            checkpointer=backend.checkpointer,
            store=backend.store,
        )
        state = graph.invoke(None, {"configurable": {"thread_id": "k1"}})
        started = entries(backend.store, "k1")
    assert marks.read_text() == "1\n2\n"  # c3 did not run again
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert answers["c3"].status == "error" and "interrupted by a crash" in answers["c3"].content
    assert answers["c2"].status == "success" and state["output"]["success"]
    assert started["c3"] == "started"


async def test_the_ledger_refuses_a_recorded_call_async(
    pg_url: str, tmp_path: Path, scripted: Any
) -> None:
    marks = tmp_path / "marks.txt"
    async with open_async_backend(pg_url) as backend:
        assert await adrive(claim(backend.store, "a1", {"id": "c9", "name": "m"})) is None
        await adrive(settle(backend.store, "a1", {"id": "c9", "name": "m"}))
        graph = build_agent_graph(
            cfg(),
            model=scripted(
                plan_reply("two"),
                tools_reply(call("mark", {"n": 9}, "c9"), call("mark", {"n": 8}, "c8")),
                text("ok"),
            ),
            tools=[make_mark(marks)],
            checkpointer=backend.checkpointer,
            store=backend.store,
        )
        state = await graph.ainvoke(
            {"messages": [("user", "x")]}, {"configurable": {"thread_id": "a1"}}
        )
        recorded = await aentries(backend.store, "a1")
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert "already ran" in answers["c9"].content and answers["c9"].status == "error"
    assert marks.read_text() == "8\n"
    assert recorded == {"c9": "done", "c8": "done"}


def test_the_event_log_is_absent_and_runs_still_work(pg_url: str, scripted: Any) -> None:
    """The event log is SQLite-only: on PostgreSQL the observer runs without one."""
    with open_backend(pg_url) as backend:
        graph = build_agent_graph(
            cfg(),
            model=scripted(plan_reply("Answer"), text("hi")),
            checkpointer=backend.checkpointer,
        )
        state = graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "e1"}})
    assert state["output"]["success"] and state["output"]["result"] == "hi"


def test_store_errors_name_psycopg_once_loaded() -> None:
    import sqlite3

    from noema_graph.storage.urls import store_errors

    assert {sqlite3.Error, OSError, psycopg.Error} <= set(store_errors())


def test_the_manuals_open_backend_block_builds_a_graph_on_postgres(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/postgres.md's block, verbatim but for its URL: a graph on PostgreSQL's tables."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from noema_graph.models import factory
    from tests.doc_pages import block
    from tests.scripted import ScriptedChatModel

    code = block("docs/postgres.md", "# Scale out (PostgreSQL, phase 1)")
    shown = "postgresql://noema:secret@127.0.0.1:5432/noema"
    assert shown in code
    model = ScriptedChatModel(script=[])  # built, never called

    def make_model(spec: str | None = None, **_: object) -> ScriptedChatModel:
        return model

    monkeypatch.setattr(factory, "make_model", make_model)
    namespace: dict[str, Any] = {}
    exec(compile(code.replace(shown, pg_url), "docs/postgres.md", "exec"), namespace)
    assert isinstance(namespace["graph"].checkpointer, PostgresSaver)
    with psycopg.connect(pg_url) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables").fetchall()}
    assert {"checkpoints", "checkpoint_writes", "store"} <= tables
