"""One step of an agent run on PostgreSQL, in its own process, for the resume tests.

Usage: ``python -m tests.storage.pg_agent URL THREAD STEP sync|async MARKS``

STEP ``pause`` starts a run whose non-idempotent tool ``mark`` needs the user's approval and
exits at the pause; ``resume`` approves it from a new backend (new pool, new saver) and prints
the output contract as JSON; ``crash`` runs ``mark`` 1, then 2 and 3 at once, and hangs in
3 until the test kills the process. ``mark`` appends its number to the file MARKS.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, tool
from langgraph.types import Command

from noema_graph import build_agent_graph, open_async_backend, open_backend
from noema_graph.hitl import check_answer, pending_of
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

SCRIPTS: dict[str, list[Any]] = {
    "pause": [plan_reply("Mark one"), tools_reply(call("mark", {"n": 1}, "c1"))],
    "resume": [text("marked 1")],
    "crash": [
        plan_reply("mark things"),
        tools_reply(call("mark", {"n": 1}, "c1")),
        tools_reply(call("mark", {"n": 2}, "c2"), call("mark", {"n": 3}, "c3")),
    ],
}


def make_mark(marks: Path, *, hang_on: int | None = None) -> BaseTool:
    """Return the non-idempotent tool ``mark`` (hangs on ``hang_on`` so a test can kill it)."""

    @tool
    def mark(n: int) -> str:
        """Append n to the marks file (a side effect that must never run twice)."""
        if n == hang_on:
            (marks.parent / "in_flight").write_text(str(n))
            time.sleep(120)
        with marks.open("a") as f:
            f.write(f"{n}\n")
        return f"marked {n}"

    mark.metadata = {"idempotency": "non_idempotent"}
    return mark


def graph_for(step: str, backend: Any, marks: Path, model: Any) -> Any:
    """Build the agent graph of ``step`` over ``backend``."""
    config = cfg(reflection_interval=10, confirm_tools=() if step == "crash" else ("mark",))
    tools = [make_mark(marks, hang_on=3 if step == "crash" else None)]
    return build_agent_graph(
        config, model=model, tools=tools, checkpointer=backend.checkpointer, store=backend.store
    )


def inputs_for(step: str, snapshot: Any) -> Any:
    """Return what ``step`` invokes the graph with (resume: the approval of the pause)."""
    if step != "resume":
        return {"messages": [("user", "mark")]}
    [paused] = pending_of(snapshot.interrupts)
    return Command(resume={paused.interrupt_id: check_answer(paused.request, "approve")})


def report(step: str, state: dict[str, Any]) -> None:
    """Print the pause or the output contract for the test to read."""
    if step == "pause":
        [paused] = pending_of(state["__interrupt__"])
        print("paused:", json.dumps([c.name for c in paused.request.calls]))
    else:
        print(json.dumps(state["output"], default=str))


def run_sync(url: str, thread: str, step: str, marks: Path, model: Any) -> None:
    config: Any = {"configurable": {"thread_id": thread}}
    with open_backend(url) as backend:
        graph = graph_for(step, backend, marks, model)
        state = graph.invoke(inputs_for(step, graph.get_state(config)), config)
    report(step, state)


async def run_async(url: str, thread: str, step: str, marks: Path, model: Any) -> None:
    config: Any = {"configurable": {"thread_id": thread}}
    async with open_async_backend(url) as backend:
        graph = graph_for(step, backend, marks, model)
        snapshot = await graph.aget_state(config)
        state = await graph.ainvoke(inputs_for(step, snapshot), config)
    report(step, state)


def main() -> None:
    url, thread, step, mode, marks = sys.argv[1:6]
    model = ScriptedChatModel(script=list(SCRIPTS[step]))
    if mode == "async":
        asyncio.run(run_async(url, thread, step, Path(marks), model))
    else:
        run_sync(url, thread, step, Path(marks), model)
    model.assert_complete()


if __name__ == "__main__":
    main()
