"""The read-only ask graph, and memory recall/persist in the agent graph."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langgraph.store.memory import InMemoryStore

from noema_graph import build_agent_graph, build_ask_graph, sqlite_checkpointer, sqlite_store
from noema_graph.context import RunContext
from tests.helpers import TOOLS, cfg
from tests.scripted import plan_reply, text


def _dump(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as conn:
        return {
            "store": conn.execute("SELECT * FROM store ORDER BY prefix, key").fetchall(),
            "checkpoints": conn.execute(
                "SELECT * FROM checkpoints WHERE thread_id != 'ask' ORDER BY checkpoint_id"
            ).fetchall(),
            "writes": conn.execute(
                "SELECT * FROM writes WHERE thread_id != 'ask' ORDER BY checkpoint_id, task_id, idx"
            ).fetchall(),
        }


def test_ask_is_read_only_and_recalls_agent_memory(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "noema.sqlite"
    ctx = RunContext(user_id="ada")
    agent_model = scripted(plan_reply("recall"), text("The capital of Peru is Lima."))
    ask_model = scripted(text("Lima."))
    with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
        agent = build_agent_graph(
            cfg(), model=agent_model, tools=TOOLS, checkpointer=saver, store=store
        )
        agent.invoke(
            {"messages": [("user", "What is the capital of Peru?")]},
            {"configurable": {"thread_id": "agent"}},
            context=ctx,
        )
        before = _dump(db)
        assert before["store"], "the agent run persisted its result"
        ask = build_ask_graph(cfg(), model=ask_model, checkpointer=saver, store=store)
        state = ask.invoke(
            {"messages": [("user", "capital of Peru?")]},
            {"configurable": {"thread_id": "ask"}},
            context=ctx,
        )
    assert _dump(db) == before  # store and every other thread unchanged
    out = state["output"]
    assert out["success"] and out["result"] == "Lima."
    assert out["metadata"]["tools_used"] == [] and out["metadata"]["iterations"] == 1
    assert ask_model.bound_tool_names == []  # no tools were ever bound
    assert "Lima" in ask_model.prompts[0][0].content  # the recalled memory reached the prompt
    assert state["memory_context"] and state["memory_context"][0]["score"] > 0


def test_agent_recalls_memory_before_planning(scripted: Any) -> None:
    store = InMemoryStore()
    ctx = RunContext(user_id="bo")
    first = scripted(plan_reply("a"), text("Bo's favourite colour is teal."))
    build_agent_graph(cfg(), model=first, tools=TOOLS, store=store).invoke(
        {"messages": [("user", "remember: favourite colour teal")]}, context=ctx
    )
    second = scripted(plan_reply("answer"), text("teal"))
    build_agent_graph(cfg(), model=second, tools=TOOLS, store=store).invoke(
        {"messages": [("user", "what is my favourite colour?")]}, context=ctx
    )
    assert "teal" in second.prompts[0][0].content


def test_persist_memory_false_writes_nothing(scripted: Any) -> None:
    store = InMemoryStore()
    model = scripted(plan_reply("a"), text("x"))
    build_agent_graph(cfg(persist_memory=False), model=model, tools=TOOLS, store=store).invoke(
        {"messages": [("user", "q")]}
    )
    assert list(store.search(())) == []


class BrokenStore(InMemoryStore):
    def batch(self, ops: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")

    async def abatch(self, ops: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")


def test_memory_failure_is_a_warning_not_a_failure(scripted: Any) -> None:
    model = scripted(plan_reply("a"), text("fine"))
    graph = build_agent_graph(cfg(), model=model, tools=TOOLS, store=BrokenStore())
    events = list(graph.stream({"messages": [("user", "q")]}, stream_mode="custom"))
    warnings = [e for e in events if e["type"] == "warning"]
    assert [w["code"] for w in warnings] == ["memory_unavailable", "memory_unavailable"]
    assert events[-1]["type"] == "turn_end" and events[-1]["success"] is True


async def test_ask_async(scripted: Any) -> None:
    model = scripted(text("42"))
    state = await build_ask_graph(model=model).ainvoke({"messages": [("user", "answer?")]})
    assert state["output"]["result"] == "42" and state["output"]["success"]
