"""SQLite checkpoints: crash and resume, allow-listed deserialisation, size, prune."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from pydantic import BaseModel

from noema_graph import build_agent_graph, prune, sqlite_checkpointer, sqlite_store
from noema_graph.errors import ConfigurationError
from noema_graph.persistence import serializer
from noema_graph.state.models import TaskPlan, TaskStep
from tests.helpers import cfg
from tests.scripted import call, plan_reply, text, tools_reply
from tests.storage.crash_agent import make_mark, saved_answers, wait_mid_tool

ROOT = Path(__file__).resolve().parents[2]


def _start_crashing_run(db: Path, ledger: Path, *mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.storage.crash_agent", str(db), str(ledger), *mode],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _crash_mid_tool(db: Path, ledger: Path, *mode: str) -> None:
    proc = _start_crashing_run(db, ledger, *mode)
    # c3 hangs; the concurrent call c2 has finished and its answer is checkpointed
    wait_mid_tool(proc, ledger.parent / "in_flight", lambda: saved_answers(db))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert ledger.read_text() == "1\n2\n"


def test_sigkill_mid_tool_then_resume(tmp_path: Path, scripted: Any) -> None:
    db, ledger = tmp_path / "runs.sqlite", tmp_path / "ledger.txt"
    _crash_mid_tool(db, ledger)

    model = scripted(text("marked all"))
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(
            cfg(), model=model, tools=[make_mark(ledger, hang_on=None)], checkpointer=saver
        )
        state = graph.invoke(None, {"configurable": {"thread_id": "crash"}})
    # c1 and c2 finished before the crash and did not run again; c3 was in flight and ran once.
    assert ledger.read_text() == "1\n2\n3\n"
    assert state["output"]["success"]
    answered = [m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)]
    assert sorted(answered) == ["c1", "c2", "c3"]


def test_interrupted_non_idempotent_call_is_not_repeated(tmp_path: Path, scripted: Any) -> None:
    db, ledger = tmp_path / "runs.sqlite", tmp_path / "ledger.txt"
    _crash_mid_tool(db, ledger, "non_idempotent")
    model = scripted(text("c3 needs checking"))
    with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
        tools = [make_mark(ledger, hang_on=None, non_idempotent=True)]
        graph = build_agent_graph(cfg(), model=model, tools=tools, checkpointer=saver, store=store)
        state = graph.invoke(None, {"configurable": {"thread_id": "crash"}})
    assert ledger.read_text() == "1\n2\n"  # the interrupted call did not run a second time
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert answers["c3"].status == "error" and "interrupted by a crash" in answers["c3"].content
    assert answers["c2"].status == "success"


def test_dangling_tool_calls_are_answered_before_the_model(scripted: Any) -> None:
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.runtime import Runtime

    from noema_graph.effects import drive
    from noema_graph.nodes.deps import make_deps
    from noema_graph.nodes.execute_step import execute_step
    from noema_graph.state.models import RunInfo, TaskPlan, TaskStep

    model = scripted(text("recovered"))
    # a call whose task was lost (the run died between the call and its result)
    lost = AIMessage("", tool_calls=[{"name": "mark", "args": {"n": 1}, "id": "c1"}])
    state = {
        "messages": [HumanMessage("x"), lost],
        "plan": TaskPlan(goal="g", steps=(TaskStep(description="s"),)).started(),
        "run": RunInfo(),
    }
    runtime = Runtime(context=None, store=None, stream_writer=lambda _: None)
    update = drive(execute_step(state, runtime, make_deps(cfg(), model=model)))
    prompt = model.prompts[-1]
    assert isinstance(prompt[-1], ToolMessage) and prompt[-1].tool_call_id == "c1"
    assert "interrupted" in prompt[-1].content
    assert update["messages"][0].tool_call_id == "c1"  # the answer is kept in the history


class Gadget(BaseModel):
    """A pydantic class the allow-list does not name."""

    x: int = 1


def test_checkpoints_revive_only_allow_listed_classes() -> None:
    serde = serializer()
    plan = TaskPlan(goal="g", steps=(TaskStep(description="s"),))
    revived = serde.loads_typed(serde.dumps_typed({"plan": plan, "gadget": Gadget()}))
    assert revived["plan"] == plan  # our state classes come back typed
    assert not isinstance(revived["gadget"], Gadget)  # anything else stays plain data


def _bytes_per_thread(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0)"
            " FROM checkpoints) + (SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)"
        ).fetchone()
    return int(row[0])


def _run_iterations(db: Path, n: int, scripted: Any) -> dict[str, Any]:
    replies = [tools_reply(call("mark", {"n": i})) for i in range(n - 1)]
    model = scripted(plan_reply("loop"), *replies, text("done"))
    config = cfg(max_iterations=n + 1, reflection_interval=10_000, loop_threshold=1000)
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(
            config, model=model, tools=[make_mark(db.with_suffix(".l"), None)], checkpointer=saver
        )
        return graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "s"}})


def test_checkpoint_size_grows_linearly(tmp_path: Path, scripted: Any) -> None:
    sizes = {}
    for n in (10, 40):
        db = tmp_path / f"s{n}.sqlite"
        state = _run_iterations(db, n, scripted)
        assert state["iteration"] == n
        sizes[n] = _bytes_per_thread(db)
    # 4x the iterations: linear growth gives ~4x the bytes, quadratic ~16x
    assert sizes[40] < 6 * sizes[10], sizes


def test_prune_keeps_latest_state(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "p.sqlite"
    state = _run_iterations(db, 6, scripted)
    with sqlite_checkpointer(db) as saver:
        before = len(list(saver.list({"configurable": {"thread_id": "s"}})))
    removed = prune(db, keep_last=1)
    assert removed == before - 1
    model = scripted()
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(cfg(), model=model, tools=[], checkpointer=saver)
        after = graph.get_state({"configurable": {"thread_id": "s"}})
    assert after.values["messages"] == state["messages"]
    assert after.values["output"] == state["output"]


def test_prune_refuses_zero(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="keep_last"):
        prune(tmp_path / "x.sqlite", keep_last=0)


def test_bad_checkpointer_paths(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="directory"), sqlite_checkpointer(tmp_path):
        pass
    with (
        pytest.raises(ConfigurationError, match="does not exist"),
        sqlite_checkpointer(tmp_path / "no" / "x.sqlite"),
    ):
        pass
    with pytest.raises(ConfigurationError, match="scheme"), sqlite_checkpointer("postgres://h/db"):
        pass


async def test_ledger_refuses_a_call_recorded_before_async(tmp_path: Path, scripted: Any) -> None:
    from langgraph.store.memory import InMemoryStore

    from noema_graph.effects import adrive
    from noema_graph.storage.ledger import aentries, claim, settle

    store = InMemoryStore()
    thread = {"configurable": {"thread_id": "led"}}
    assert await adrive(claim(store, "led", {"id": "c9", "name": "mark"})) is None
    await adrive(settle(store, "led", {"id": "c9", "name": "mark"}))
    ledger = tmp_path / "ledger.txt"
    model = scripted(
        plan_reply("one"),
        tools_reply(call("mark", {"n": 9}, "c9"), call("mark", {"n": 8}, "c8")),
        text("ok"),
    )
    tools = [make_mark(ledger, hang_on=None, non_idempotent=True)]
    state = await build_agent_graph(cfg(), model=model, tools=tools, store=store).ainvoke(
        {"messages": [("user", "x")]}, thread
    )
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert "already ran" in answers["c9"].content and answers["c9"].status == "error"
    assert ledger.read_text() == "8\n"
    assert await aentries(store, "led") == {"c9": "done", "c8": "done"}


def test_channel_versions_are_small_ints_and_old_threads_keep_strings(
    tmp_path: Path, scripted: Any
) -> None:
    """New threads get int versions; a thread a stock SqliteSaver began keeps its strings."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    db = tmp_path / "versions.sqlite"
    thread = {"configurable": {"thread_id": "old"}}
    conn = sqlite3.connect(db, check_same_thread=False)
    stock = SqliteSaver(conn)
    model = scripted(plan_reply("a"), text("one"), plan_reply("b"), text("two"))
    build_agent_graph(cfg(), model=model, checkpointer=stock).invoke(
        {"messages": [("user", "first")]}, thread
    )
    conn.close()
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(cfg(), model=model, checkpointer=saver)
        state = graph.invoke({"messages": [("user", "second")]}, thread)
        assert state["output"]["result"] == "two"
        old = saver.get_tuple(thread)
        new_model = scripted(plan_reply("c"), text("three"))
        fresh = {"configurable": {"thread_id": "new"}}
        build_agent_graph(cfg(), model=new_model, checkpointer=saver).invoke(
            {"messages": [("user", "third")]}, fresh
        )
        new = saver.get_tuple(fresh)
    assert old is not None and new is not None
    assert {type(v) for v in old.checkpoint["channel_versions"].values()} == {str}
    assert {type(v) for v in new.checkpoint["channel_versions"].values()} == {int}


def test_prune_drops_event_log_rows_of_runs_it_no_longer_keeps(
    tmp_path: Path, scripted: Any
) -> None:
    from noema_graph.storage.sqlite.eventlog import read_events

    db = tmp_path / "events.sqlite"
    first = _run_iterations(db, 3, scripted)
    second = _run_iterations(db, 3, scripted)  # a second run on the same thread
    runs = {first["run"].run_id, second["run"].run_id}
    before = {e.run_id for e in read_events(db, thread_id="s")}
    assert runs <= before
    prune(db, keep_last=1)
    after = [e for e in read_events(db, thread_id="s")]
    assert {e.run_id for e in after} == {second["run"].run_id}
    assert any(e.type == "agent.completed" for e in after)
    state = _run_iterations(db, 2, scripted)  # the thread goes on after the prune
    assert state["output"]["success"] is True
