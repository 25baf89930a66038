"""The recall_memory node called directly: a read-only recall that never fails the run."""

from __future__ import annotations

import sqlite3
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from noema_graph.context import RunContext
from noema_graph.memory import MemoryManager
from noema_graph.nodes.recall_memory import recall_memory
from tests.helpers import cfg
from tests.nodes.helpers import Path, deps, run, runtime, types

QUESTION = {"messages": [HumanMessage("What is my cat called?")]}


class BrokenStore(InMemoryStore):
    """A Store whose disk is gone."""

    def batch(self, ops: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    async def abatch(self, ops: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")


def test_memories_of_the_user_are_recalled_without_writing(path: Path) -> None:
    store, made = InMemoryStore(), deps()
    memory = MemoryManager(store, user_id="ada", agent=cfg().name, embedder=made.embedder)
    memory.store("pet", "Ada's cat is called Turing", "fact", "persistent")
    before = store.search(("memory",))
    events: list[dict[str, Any]] = []
    rt = runtime(events, store=store, context=RunContext(user_id="ada"))
    update = run(recall_memory(QUESTION, rt, made), path)
    assert [m["key"] for m in update["memory_context"]] == ["pet"]
    assert "Turing" in (update["trace"].value[0].observation or "")
    assert types(events) == ["turn_start"] and events[0]["mode"] == "ask"
    assert update["run"].request == "What is my cat called?"
    assert store.search(("memory",)) == before  # nothing written, not even an access time


def test_another_users_memories_are_not_recalled(path: Path) -> None:
    store, made = InMemoryStore(), deps()
    memory = MemoryManager(store, user_id="bob", agent=cfg().name, embedder=made.embedder)
    memory.store("pet", "Bob's cat is called Turing", "fact", "persistent")
    rt = runtime(store=store, context=RunContext(user_id="ada"))
    assert run(recall_memory(QUESTION, rt, made), path)["memory_context"] == []


def test_a_broken_store_is_a_warning_and_the_answer_goes_on(path: Path) -> None:
    events: list[dict[str, Any]] = []
    update = run(recall_memory(QUESTION, runtime(events, store=BrokenStore()), deps()), path)
    assert update["memory_context"] == [] and update["llm_error"] is None
    assert types(events) == ["turn_start", "warning"]
    assert "disk I/O error" in events[1]["message"]
