"""The append-only event log: order, queries, immutability, crash survival, ``events``."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from typer.testing import CliRunner

from noema_graph import approve, resume_with
from noema_graph.cli.events import app
from noema_graph.graphs import build_agent_graph
from noema_graph.observability import EventLog, read_events
from tests.helpers import TOOLS, cfg
from tests.observability.conftest import THREAD, Telemetry
from tests.scripted import call, plan_reply, text, tools_reply
from tests.storage.crash_agent import saved_answers, wait_mid_tool

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_writes_its_events_in_order(telemetry: Telemetry, scripted: Any) -> None:
    model = scripted(plan_reply("add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")), text("3"))
    state = telemetry.run(model)
    events = telemetry.events.query(thread_id="t1")
    assert [e.type for e in events] == [
        "agent.started",
        "plan.created",
        "tool.invoked",
        "tool.completed",
        "agent.completed",
    ]
    trace_id = state["run"].trace_id
    assert {e.trace_id for e in events} == {trace_id}
    assert {e.run_id for e in events[1:]} == {state["run"].run_id}
    invoked, completed = events[2], events[3]
    assert (invoked.tool, invoked.call_id, invoked.data["args"]) == ("add", "c1", {"a": 1, "b": 2})
    assert (completed.call_id, completed.status, completed.data["observation"]) == ("c1", "ok", "3")
    assert events[-1].data["success"] is True and events[-1].data["total_tokens"] == 45
    assert telemetry.events.query(trace_id="other") == []
    assert telemetry.events.in_flight(thread_id="t1") == []


def test_a_pause_for_approval_is_logged_and_the_resume_completes(
    telemetry: Telemetry, scripted: Any
) -> None:
    model = scripted(plan_reply("add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")), text("3"))
    graph = build_agent_graph(
        cfg(reflection_interval=10, confirm_tools=("add",)),
        model=model,
        tools=TOOLS,
        checkpointer=InMemorySaver(),
        observer=telemetry.observer,
    )
    graph.invoke({"messages": [("user", "do it")]}, THREAD)
    paused = telemetry.events.query(thread_id="t1")
    assert [e.type for e in paused][-1] == "agent.paused"
    assert paused[-1].status == "paused"
    assert paused[-1].data == {
        "node": "review_tools",
        "requests": [{"type": "confirm", "call_ids": ["c1"], "tools": ["add"]}],
    }
    assert "tool.invoked" not in {e.type for e in paused}  # nothing ran before the decision
    [first_run] = [s for s in telemetry.spans() if s.name.startswith("agent.run")]
    assert first_run.attributes and first_run.attributes["noema.paused"] is True
    graph.invoke(resume_with(graph, THREAD, approve()), THREAD)
    resumed = telemetry.events.query(thread_id="t1")[len(paused) :]
    assert [e.type for e in resumed] == ["tool.invoked", "tool.completed", "agent.completed"]
    assert {e.trace_id for e in resumed} == {paused[0].trace_id}
    runs = [s for s in telemetry.spans() if s.name.startswith("agent.run")]
    assert len(runs) == 2 and runs[1].attributes and runs[1].attributes["noema.resumed"] is True
    assert runs[0].context.trace_id == runs[1].context.trace_id


def test_the_table_is_append_only(tmp_path: Path) -> None:
    with EventLog.open(tmp_path / "e.sqlite") as log:
        seq = log.append("limit.hit", thread_id="t", data={"why": "x"})
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            log.conn.execute("UPDATE noema_events SET type='x' WHERE seq=?", (seq,))
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            log.conn.execute("DELETE FROM noema_events")
        with pytest.raises(ValueError, match="unknown event columns"):
            log.append("x", colour="red")
        assert [e.data for e in log.query(types=["limit.hit"])] == [{"why": "x"}]


def test_sigkill_mid_tool_leaves_the_call_in_flight(tmp_path: Path) -> None:
    db, ledger = tmp_path / "runs.sqlite", tmp_path / "ledger.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.crash_agent", str(db), str(ledger)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    # c3 hangs; the concurrent call c2 has finished (its answer is saved)
    wait_mid_tool(proc, tmp_path / "in_flight", lambda: saved_answers(db))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    events = read_events(db, thread_id="crash")
    assert events[0].type == "agent.started"
    assert "agent.completed" not in [e.type for e in events]
    with EventLog.open(db) as log:
        (flying,) = log.in_flight(thread_id="crash")
    assert (flying.tool, flying.call_id, flying.data["args"]) == ("mark", "c3", {"n": 3})
    done = [e.call_id for e in events if e.type == "tool.completed"]
    assert sorted(done) == ["c1", "c2"]

    result = CliRunner().invoke(app, ["events", "crash", "--db", str(db)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "in flight" in result.output and "tool.invoked" in result.output


def test_events_command_filters_by_trace(
    telemetry: Telemetry, scripted: Any, tmp_path: Path
) -> None:
    first = telemetry.run(scripted(plan_reply("a"), text("one")))
    telemetry.run(scripted(plan_reply("b"), text("two")))
    db = tmp_path / "events.sqlite"
    trace_id = first["run"].trace_id
    result = CliRunner().invoke(
        app, ["events", "t1", "--trace", trace_id, "--db", str(db), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.count('"agent.started"') == 1
    both = CliRunner().invoke(app, ["events", "t1", "--db", str(db), "--json"])
    assert both.output.count('"agent.started"') == 2
    unknown = CliRunner().invoke(app, ["events", "nope", "--db", str(db)])
    assert unknown.exit_code == 2 and "no thread 'nope'" in unknown.output
