"""A failing or cancelled async run never leaves the checkpoint file locked for later runs.

An exception in one async tool task ends that run (a tool bug propagates by design) while
sibling tool tasks finish; a caller's TaskGroup then cancels the sibling runs wherever they
are, checkpoint writes included. Neither may leave a write transaction open on the file: the
Store, the event log and every later run would wait on it ("database is locked"). Before the
one-writer design of :mod:`noema_graph.storage.sqlite.writer`, the second test hung.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, StructuredTool

from noema_graph import AgentConfig, async_sqlite_checkpointer, build_agent_graph
from noema_graph.persistence import async_sqlite_store
from tests.reliability.fuzz_model import unlocked
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

CONFIG = AgentConfig(enabled_toolkits=(), persist_memory=False, reflection_interval=100)
ROUNDS, RUNS = 3, 6
LATER_RUN_S = 30
"""A later run takes well under a second; past this the file is taken to be stuck."""
PAID: list[int] = []


async def _slow(n: int) -> str:
    await asyncio.sleep(0.2)
    return f"slow {n}"


async def _bug(n: int) -> str:
    await asyncio.sleep(0.01)
    raise AttributeError("'NoneType' object has no attribute 'total'")


async def _pay(n: int) -> str:
    PAID.append(n)
    return "paid"


def _tools() -> list[BaseTool]:
    safe = {"concurrency_safe": True}
    return [
        StructuredTool.from_function(coroutine=_slow, name="slow", description="S.", metadata=safe),
        StructuredTool.from_function(coroutine=_bug, name="bug", description="B.", metadata=safe),
        StructuredTool.from_function(
            coroutine=_pay, name="pay", description="P.", metadata={"idempotency": "non_idempotent"}
        ),
    ]


async def _run(saver: Any, store: Any, thread: str, *replies: Any) -> dict[str, Any]:
    model = ScriptedChatModel(script=[plan_reply("do"), *replies])
    graph = build_agent_graph(CONFIG, model=model, tools=_tools(), checkpointer=saver, store=store)
    return await graph.ainvoke(
        {"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}}
    )


async def test_a_tool_bug_among_running_siblings_leaves_the_file_free(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    PAID.clear()
    async with async_sqlite_checkpointer(path) as saver, async_sqlite_store(path) as store:
        group = tools_reply(call("slow", {"n": 1}), call("bug", {"n": 2}), call("slow", {"n": 3}))
        with pytest.raises(AttributeError, match="no attribute 'total'"):
            await _run(saver, store, "broken", group)
        assert unlocked(path), "the failed run left the checkpoint file locked"
        state = await _run(saver, store, "later", tools_reply(call("pay", {"n": 7})), text("ok"))
    assert state["output"]["success"] and PAID == [7]  # the ledger claimed it: not unguarded


async def _round(saver: Any, store: Any, round_: int) -> None:
    """Run RUNS runs in one TaskGroup; the first hits a tool bug, the others get cancelled."""
    bad = tools_reply(call("slow", {"n": 1}), call("bug", {"n": 2}))
    calls = [tools_reply(call("slow", {"n": i}), call("pay", {"n": i})) for i in range(3)]
    async with asyncio.TaskGroup() as group:
        group.create_task(_run(saver, store, f"{round_}-bad", calls[0], bad))
        for k in range(1, RUNS):
            group.create_task(_run(saver, store, f"{round_}-{k}", *calls, text("ok")))


async def test_runs_cancelled_by_a_failing_sibling_leave_the_file_free(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    PAID.clear()
    async with async_sqlite_checkpointer(path) as saver, async_sqlite_store(path) as store:
        for round_ in range(ROUNDS):
            with pytest.raises(ExceptionGroup):
                await _round(saver, store, round_)
            assert unlocked(path), f"round {round_}: the cancelled runs left the file locked"
        async with asyncio.timeout(LATER_RUN_S):
            state = await _run(
                saver, store, "later", tools_reply(call("pay", {"n": 99})), text("ok")
            )
    assert state["output"]["success"] and PAID[-1] == 99
