"""Config and tools shared by the core graph tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.tools import StructuredTool, tool

from noema_graph.config import AgentConfig

PRICES = {"scripted": (1.0, 2.0)}  # USD per million tokens: 10 in + 5 out = 0.00002 a call


def cfg(**overrides: Any) -> AgentConfig:
    """An agent config with no toolkits and a price for the scripted model."""
    base: dict[str, Any] = {"enabled_toolkits": (), "price_overrides": PRICES, "timeout_s": 60}
    return AgentConfig(**{**base, **overrides})


CALLS: list[tuple[str, dict[str, Any]]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append(("add", {"a": a, "b": b}))
    return a + b


@tool
def lookup(key: str) -> str:
    """Look up a value by key."""
    CALLS.append(("lookup", {"key": key}))
    return f"value-of-{key}"


def _explode(reason: str) -> str:
    raise RuntimeError(f"tool broke: {reason}")


explode = StructuredTool.from_function(_explode, name="explode", description="Always fails.")

TOOLS = [add, lookup, explode]


def run_marks(db: Path, n: int, scripted: Any, thread: str = "s") -> dict[str, Any]:
    """Run the agent graph on the SQLite file ``db``: a plan, ``n`` non-idempotent ``mark``
    calls (their ledger beside ``db``), then the answer; return the final state."""
    from noema_graph.graphs import build_agent_graph
    from noema_graph.persistence import sqlite_checkpointer
    from tests.scripted import call, plan_reply, text, tools_reply
    from tests.storage.crash_agent import make_mark

    replies = [tools_reply(call("mark", {"n": i}, f"{thread}-c{i}")) for i in range(n)]
    model = scripted(plan_reply("loop"), *replies, text("done"))
    config = cfg(max_iterations=n + 2, reflection_interval=10_000, loop_threshold=1000)
    with sqlite_checkpointer(db) as saver:
        tool = make_mark(db.with_suffix(".l"), None)
        graph = build_agent_graph(config, model=model, tools=[tool], checkpointer=saver)
        return graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}})
