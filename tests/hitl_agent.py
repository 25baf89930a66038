"""Run an agent until it pauses on an ask_user question, then exit (the checkpoint keeps it).

Usage: python -m tests.hitl_agent DB
"""

from __future__ import annotations

import sys
from pathlib import Path

from noema_graph import build_agent_graph, pending, sqlite_checkpointer
from tests.helpers import TOOLS, cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, tools_reply


def main() -> None:
    model = ScriptedChatModel(
        script=[
            plan_reply("Pick the deck"),
            tools_reply(call("ask_user", {"question": "Which deck?"}, "q1")),
        ]
    )
    config = {"configurable": {"thread_id": "cross"}}
    with sqlite_checkpointer(Path(sys.argv[1])) as saver:
        graph = build_agent_graph(
            cfg(reflection_interval=10, clarify=True), model=model, tools=TOOLS, checkpointer=saver
        )
        graph.invoke({"messages": [("user", "study")]}, config)
        for item in pending(graph, config):
            print(f"paused: {getattr(item.request, 'question', '')}")
    model.assert_complete()


if __name__ == "__main__":
    main()
