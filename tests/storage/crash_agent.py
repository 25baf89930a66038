"""Run an agent that hangs inside a tool call, so a test can SIGKILL it mid-tool.

Usage: python -m tests.storage.crash_agent DB LEDGER [non_idempotent]

The agent calls ``mark`` 1, then 2 and 3 at once; 3 writes the file ``in_flight`` beside
LEDGER and hangs. :func:`wait_mid_tool` waits until that file exists and the answer to 2 is
saved in DB, the moment a test kills the process.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool

from noema_graph import build_agent_graph, sqlite_checkpointer, sqlite_store
from noema_graph.persistence import serializer
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


GUARD_S = 60.0
"""How long :func:`wait_mid_tool` waits at most: it only stops a hung test."""


def answered_calls(rows: Iterable[tuple[str, bytes]]) -> set[str]:
    """Return the ids of the ToolMessages among saved ``messages`` writes (type, value)."""
    serde = serializer()
    found: set[str] = set()
    for kind, value in rows:
        decoded = serde.loads_typed((kind, value))
        for message in decoded if isinstance(decoded, list) else [decoded]:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(message, ToolMessage):
                found.add(message.tool_call_id)
    return found


SAVED_ANSWERS = (
    "SELECT w.type, w.value FROM writes w JOIN checkpoints c ON c.thread_id = w.thread_id"
    " AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id"
    " WHERE w.thread_id = ? AND w.channel = 'messages'"
)


def saved_answers(db: Path, thread: str = "crash") -> set[str]:
    """Return the calls of ``thread`` whose answers ``db`` holds, with their checkpoint."""
    if not db.exists():
        return set()
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
        try:
            rows = conn.execute(SAVED_ANSWERS, (thread,)).fetchall()
        except sqlite3.OperationalError:  # the saver has not created its tables yet
            return set()
    return answered_calls(rows)


def wait_mid_tool(
    proc: subprocess.Popen[Any], flag: Path, saved: Callable[[], set[str]], call: str = "c2"
) -> None:
    """Wait until ``flag`` exists (the call hangs) and ``saved()`` holds ``call``'s answer.

    Fails at once when the process ends first; :data:`GUARD_S` only stops a hung test.
    """
    deadline = time.monotonic() + GUARD_S
    while not (flag.exists() and call in saved()):
        if proc.poll() is not None:
            out = [stream.read() for stream in (proc.stdout, proc.stderr) if stream]
            raise AssertionError(f"the run ended before the kill: {out!r}")
        assert time.monotonic() < deadline, f"no hanging call with {call} saved: {flag}"
        time.sleep(0.05)


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
