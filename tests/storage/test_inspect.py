"""threads(), history(), checkpoint(), fork() and replay_from() on real SQLite files."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from noema_graph import build_agent_graph, sqlite_checkpointer
from noema_graph.inspect import (
    SUMMARY_KEY,
    CheckpointRow,
    acheckpoint,
    ahistory,
    athreads,
    checkpoint,
    fork,
    history,
    replay_from,
    run_summary,
    threads,
)
from noema_graph.persistence import async_sqlite_checkpointer, connect, serializer
from noema_graph.storage.sqlite import liveness
from tests.helpers import TOOLS, cfg
from tests.scripted import call, plan_reply, text, tools_reply
from tests.storage.crash_agent import saved_answers, wait_mid_tool

ROOT = Path(__file__).resolve().parents[2]
COUNT: list[int] = []


@tool
def count(n: int) -> str:
    """Count one call (a side effect a replay must not repeat)."""
    COUNT.append(n)
    return f"counted {n}"


def _script() -> list[Any]:
    return [
        plan_reply("count twice"),
        tools_reply(call("count", {"n": 1}, "c1")),
        tools_reply(call("count", {"n": 2}, "c2")),
        text("counted twice"),
    ]


def _run(saver: Any, scripted: Any, thread: str) -> Any:
    graph = build_agent_graph(cfg(), model=scripted(*_script()), tools=[count], checkpointer=saver)
    graph.invoke({"messages": [("user", "count")]}, {"configurable": {"thread_id": thread}})
    return graph


def test_history_and_threads_of_a_finished_run(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        graph = _run(saver, scripted, "t1")
        full = list(graph.get_state_history({"configurable": {"thread_id": "t1"}}))
    rows = history(db, "t1")
    assert [r.checkpoint_id for r in rows] == [
        s.config["configurable"]["checkpoint_id"] for s in reversed(full)
    ]
    assert [r.step for r in rows] == list(range(-1, len(rows) - 1))
    assert rows[-1].node == "finalize" and rows[-1].tokens == full[0].values["usage"].total_tokens
    assert [r.node for r in rows].count("tool_node") == 2
    assert [r.iteration for r in rows] == sorted(r.iteration for r in rows)
    assert rows[2].plan_step == "1/1: count twice"
    assert not any(r.has_interrupt for r in rows)
    (row,) = threads(db)
    assert (row.thread_id, row.status, row.iterations) == (
        "t1",
        "done",
        full[0].values["iteration"],
    )
    assert row.tokens == full[0].values["usage"].total_tokens and row.cost and row.cost > 0
    assert row.created <= row.updated and row.last_error is None
    assert history(db, "nope") == []


def test_checkpoint_decodes_the_state_at_each_point(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        graph = _run(saver, scripted, "t1")
        rows = history(saver, "t1")
        for row in rows[1:]:
            at = {"configurable": {"thread_id": "t1", "checkpoint_id": row.checkpoint_id}}
            expected = graph.get_state(at).values
            got = checkpoint(saver, "t1", row.checkpoint_id)
            assert got["messages"] == expected.get("messages", [])
            assert got["trace"] == expected.get("trace", [])
            assert got["__checkpoint__"]["checkpoint_id"] == row.checkpoint_id
        latest = checkpoint(db, "t1")
    assert latest["output"]["result"] == "counted twice"
    with pytest.raises(KeyError, match="nope"):
        checkpoint(db, "nope")


def test_any_saver_gives_the_same_rows(tmp_path: Path, scripted: Any) -> None:
    memory = InMemorySaver()
    _run(memory, scripted, "t1")
    with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        _run(saver, scripted, "t1")
        fast, slow = history(saver, "t1"), history(memory, "t1")
        assert [(r.step, r.node, r.iteration, r.tokens, r.plan_step) for r in fast] == [
            (r.step, r.node, r.iteration, r.tokens, r.plan_step) for r in slow
        ]
        (a,), (b,) = threads(saver), threads(memory)
    assert (a.status, a.iterations, a.tokens) == (b.status, b.iterations, b.tokens)


def test_a_paused_thread(tmp_path: Path) -> None:
    db = tmp_path / "hitl.sqlite"
    done = subprocess.run(
        [sys.executable, "-m", "tests.hitl_agent", str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (row,) = threads(db)
    assert (row.thread_id, row.status) == ("cross", "paused")
    rows = history(db, "cross")
    assert rows[-1].has_interrupt and not any(r.has_interrupt for r in rows[:-1])
    state = checkpoint(db, "cross")
    assert "Which deck?" in repr(state["__interrupts__"])


def test_a_thread_killed_mid_tool_is_failed_once_its_process_is_gone(tmp_path: Path) -> None:
    db, ledger = tmp_path / "runs.sqlite", tmp_path / "ledger.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.crash_agent", str(db), str(ledger)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_mid_tool(proc, tmp_path / "in_flight", lambda: saved_answers(db))  # c3 hangs
    (alive,) = threads(db)  # the process hangs in a tool: still running
    assert (alive.thread_id, alive.status, alive.last_error) == ("crash", "running", None)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (row,) = threads(db)
    assert (row.thread_id, row.status) == ("crash", "failed")
    assert row.last_error == f"process {proc.pid} ended without finishing (killed?)"
    rows = history(db, "crash")
    assert rows and rows[-1].node != "finalize"
    assert checkpoint(db, "crash")["messages"]


def test_liveness_of_a_writer() -> None:
    me = liveness.writer()
    assert me["pid"] == os.getpid() and not liveness.ended(me)
    assert not liveness.ended({**me, "host": me["host"] + "-elsewhere"})  # cannot tell: alive
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert liveness.ended({**me, "pid": gone.pid})
    if me["start"] is not None:  # Linux: a pid now held by another process counts as ended
        assert liveness.ended({**me, "start": me["start"] - 1})
    assert not liveness.ended(None) and not liveness.ended({"host": me["host"]})


def test_fork_leaves_the_original_thread_alone(tmp_path: Path, scripted: Any) -> None:
    with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        graph = _run(saver, scripted, "t1")
        before = history(saver, "t1")
        planned = next(r for r in before if r.node == "plan")
        config = {"configurable": {"thread_id": "t1"}}
        branch = fork(graph, config, planned.checkpoint_id, update={"replans": 5})
        after = history(saver, "t1")
        assert after[: len(before)] == before
        (new,) = after[len(before) :]
        assert new.parent_id == planned.checkpoint_id
        assert branch["configurable"]["checkpoint_id"] == new.checkpoint_id
        assert checkpoint(saver, "t1", new.checkpoint_id)["replans"] == 5
        assert checkpoint(saver, "t1", before[-1].checkpoint_id)["replans"] == 0


def test_a_fork_with_an_update_runs_on_from_its_checkpoint(tmp_path: Path, scripted: Any) -> None:
    """update_state's routers must not read LangGraph's "2 steps left" as an exhausted run."""
    COUNT.clear()
    with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        _run(saver, scripted, "t1")
        planned = next(r for r in history(saver, "t1") if r.node == "plan")
        graph = build_agent_graph(
            cfg(), model=scripted(*_script()[1:]), tools=[count], checkpointer=saver
        )
        branch = fork(
            graph,
            {"configurable": {"thread_id": "t1"}},
            planned.checkpoint_id,
            update={"replans": 0},
        )
        final = graph.invoke(None, branch)
    assert final["output"]["success"] is True and final["output"]["result"] == "counted twice"
    assert COUNT == [1, 2, 1, 2]  # the branch did the work again


def test_replay_after_a_tool_call_reruns_no_completed_call(tmp_path: Path, scripted: Any) -> None:
    COUNT.clear()
    with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        _run(saver, scripted, "t1")
        assert COUNT == [1, 2]
        first_tool = next(r for r in history(saver, "t1") if r.node == "tool_node")
        # the model is asked again from there: the second call and the answer
        graph = build_agent_graph(
            cfg(), model=scripted(*_script()[2:]), tools=[count], checkpointer=saver
        )
        final = replay_from(graph, {"configurable": {"thread_id": "t1"}}, first_tool.checkpoint_id)
    assert COUNT == [1, 2, 2]  # call 1 was not run again
    assert final["output"]["result"] == "counted twice"


def test_async_checkpointer_sets_the_sync_pragmas(tmp_path: Path) -> None:
    async def read() -> list[Any]:
        async with async_sqlite_checkpointer(tmp_path / "a.sqlite") as saver:
            got: list[Any] = []
            for pragma in ("journal_mode", "busy_timeout", "synchronous"):
                async with saver.conn.execute(f"PRAGMA {pragma}") as cursor:
                    got.append((await cursor.fetchone() or [None])[0])
            return got

    with sqlite_checkpointer(tmp_path / "s.sqlite") as saver:
        sync = [
            saver.conn.execute(f"PRAGMA {p}").fetchone()[0]
            for p in ("journal_mode", "busy_timeout", "synchronous")
        ]
    assert asyncio.run(read()) == sync == ["wal", 5000, 1]


def test_a_run_stopped_by_a_limit_is_failed_with_its_error(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    model = scripted(plan_reply("add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")))
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(
            cfg(max_iterations=1), model=model, tools=TOOLS, checkpointer=saver
        )
        graph.invoke({"messages": [("user", "add")]}, {"configurable": {"thread_id": "t1"}})
    (row,) = threads(db)
    assert row.status == "failed"
    assert row.last_error and row.last_error.startswith("max_iterations:")


def test_without_summaries_a_failed_run_shows_its_code_and_message(scripted: Any) -> None:
    # a checkpoint does not hold the output contract (a delta channel, stored as finalize's
    # write): savers that write no summary are listed from finalize's write, message included
    memory = InMemorySaver()
    model = scripted(plan_reply("add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")))
    graph = build_agent_graph(cfg(max_iterations=1), model=model, tools=TOOLS, checkpointer=memory)
    config: Any = {"configurable": {"thread_id": "t1"}}
    graph.invoke({"messages": [("user", "add")]}, config)
    assert "output" not in next(memory.list(None)).checkpoint["channel_values"]
    error = graph.get_state(config).values["output"]["error"]
    assert error["code"] == "max_iterations" and error["message"]
    expected = ("failed", f"{error['code']}: {error['message']}")
    (row,) = threads(memory)
    assert (row.status, row.last_error) == expected
    (row,) = asyncio.run(athreads(memory))
    assert (row.status, row.last_error) == expected


def test_checkpoint_on_any_saver_matches_get_state(scripted: Any) -> None:
    memory = InMemorySaver()
    graph = _run(memory, scripted, "t1")
    for row in history(memory, "t1")[1:]:
        at = {"configurable": {"thread_id": "t1", "checkpoint_id": row.checkpoint_id}}
        expected = graph.get_state(at).values
        got = checkpoint(memory, "t1", row.checkpoint_id)
        assert got["messages"] == expected.get("messages", [])
        assert got["trace"] == expected.get("trace", [])
        assert got.get("iteration") == expected.get("iteration")


def test_async_variants_match_the_sync_ones(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    memory = InMemorySaver()
    _run(memory, scripted, "t1")

    async def read() -> tuple[Any, ...]:
        async with async_sqlite_checkpointer(db) as saver:
            graph = build_agent_graph(
                cfg(), model=scripted(*_script()), tools=[count], checkpointer=saver
            )
            await graph.ainvoke(
                {"messages": [("user", "count")]}, {"configurable": {"thread_id": "t1"}}
            )
            rows = await ahistory(saver, "t1")
            state = await acheckpoint(saver, "t1", rows[3].checkpoint_id)
            return await athreads(saver), rows, state, await ahistory(memory, "t1")

    listed, rows, state, from_memory = asyncio.run(read())
    assert listed == threads(db) and rows == history(db, "t1")
    assert state == checkpoint(db, "t1", rows[3].checkpoint_id)
    assert [(r.step, r.node, r.tokens) for r in from_memory] == [
        (r.step, r.node, r.tokens) for r in rows
    ]


class SummarySaver(SqliteSaver):
    """A SqliteSaver that writes run_summary into each checkpoint's metadata (as the core will)."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        summary = run_summary(checkpoint["channel_values"])
        return super().put(config, checkpoint, {**metadata, SUMMARY_KEY: summary}, new_versions)


def _facts(rows: list[CheckpointRow]) -> list[tuple[Any, ...]]:
    return [(r.step, r.source, r.node, r.iteration, r.plan_step, r.tokens) for r in rows]


def test_a_summary_in_metadata_is_read_without_decoding_blobs(
    tmp_path: Path, scripted: Any
) -> None:
    with sqlite_checkpointer(tmp_path / "plain.sqlite") as plain:
        _run(plain, scripted, "t1")
        expected, (expected_thread,) = _facts(history(plain, "t1")), threads(plain)
    conn = connect(tmp_path / "summary.sqlite")
    saver = SummarySaver(conn, serde=serializer())
    saver.setup()
    _run(saver, scripted, "t1")
    metadata = saver.get_tuple({"configurable": {"thread_id": "t1"}}).metadata  # type: ignore[union-attr]
    assert metadata[SUMMARY_KEY]["status"] == "done"  # type: ignore[literal-required]
    conn.execute("UPDATE checkpoints SET checkpoint = x'00'")  # no blob can be decoded now
    assert _facts(history(saver, "t1")) == expected
    (row,) = threads(saver)
    assert (row.status, row.iterations, row.tokens, row.cost) == (
        expected_thread.status,
        expected_thread.iterations,
        expected_thread.tokens,
        expected_thread.cost,
    )
    conn.close()
