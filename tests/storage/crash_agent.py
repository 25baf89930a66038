"""Run an agent that hangs inside a tool call, so a test can SIGKILL it mid-tool.

Usage: python -m tests.storage.crash_agent DB LEDGER [non_idempotent]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from langchain_core.tools import BaseTool, tool

from noema_graph import build_agent_graph, sqlite_checkpointer, sqlite_store
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, tools_reply


def make_mark(ledger: Path, hang_on: int | None, *, non_idempotent: bool = False) -> BaseTool:
    @tool
    def mark(n: int) -> str:
        """Append n to the ledger (a side effect that must never run twice)."""
        if n == hang_on:
            (ledger.parent / "in_flight").write_text(str(n))
            time.sleep(120)
        with ledger.open("a") as f:
            f.write(f"{n}\n")
        return f"marked {n}"

    if non_idempotent:
        mark.metadata = {"idempotency": "non_idempotent"}
    return mark


def main() -> None:
    db, ledger = Path(sys.argv[1]), Path(sys.argv[2])
    guarded = len(sys.argv) > 3 and sys.argv[3] == "non_idempotent"
    model = ScriptedChatModel(
        script=[
            plan_reply("mark things"),
            tools_reply(call("mark", {"n": 1}, "c1")),
            tools_reply(call("mark", {"n": 2}, "c2"), call("mark", {"n": 3}, "c3")),
        ]
    )
    with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
        tools = [make_mark(ledger, hang_on=3, non_idempotent=guarded)]
        graph = build_agent_graph(cfg(), model=model, tools=tools, checkpointer=saver, store=store)
        graph.invoke(
            {"messages": [("user", "mark 1, then 2 and 3")]},
            {"configurable": {"thread_id": "crash"}},
        )


if __name__ == "__main__":
    main()
