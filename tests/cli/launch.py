"""Run ``noema-graph`` in a subprocess on a scripted model, with a slow tool for Ctrl-C tests.

Usage: ``python -m tests.cli.launch SCRIPT [noema-graph arguments...]``. SCRIPT names a
script of :data:`SCRIPTS`; the general agent gets one extra tool, ``slow``, which sleeps
``NOEMA_TEST_SLEEP`` seconds (default 0) and answers 42. ``NOEMA_TEST_ABORT_POLL`` sets how
often a blocking call checks the abort switch (a long poll makes a cancel slow, so a second
Ctrl-C can be tested). The tool touches the file ``NOEMA_TEST_MARK`` names, if set, when it starts.
The model comes through the CLI's public hook (``main(argv, model_factory=...)``); everything
else is the real CLI, entry point included (exit codes, signal handling).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.tools import tool

from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

SCRIPTS: dict[str, Callable[[], list[Any]]] = {
    "hello": lambda: [plan_reply("Answer"), text("hello there")],
    "slow": lambda: [plan_reply("Ask the slow tool"), tools_reply(call("slow", {}, "s1"))],
    "after-slow": lambda: [text("the answer is 42")],
    "slow-answer": lambda: [*SCRIPTS["slow"](), *SCRIPTS["after-slow"]()],
    "none": list,
}


@tool
def slow() -> str:
    """Wait a while, then answer 42."""
    if mark := os.environ.get("NOEMA_TEST_MARK"):
        Path(mark).touch()  # the call started
    time.sleep(float(os.environ.get("NOEMA_TEST_SLEEP", "0")))
    return "42"


def main() -> None:
    from noema_graph import effects
    from noema_graph.cli import app as cli
    from noema_graph.cli import runs as cli_runs

    effects.ABORT_POLL_S = float(os.environ.get("NOEMA_TEST_ABORT_POLL", effects.ABORT_POLL_S))

    script = SCRIPTS[sys.argv[1]]()
    build = cli_runs.build_agent_graph
    cli_runs.build_agent_graph = lambda config, **kw: build(config, tools=[slow], **kw)
    cli.main(sys.argv[2:], model_factory=lambda spec: ScriptedChatModel(script=script))


if __name__ == "__main__":
    main()
