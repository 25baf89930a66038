"""How soon after the run's deadline a blocked model or tool call is stopped (issue 18).

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_deadline.py [--runs 5] [--budget 1.0]

A chat model (or a tool) blocks until released; the run has ``timeout_s = budget``. The
figure is the time from the deadline to ``invoke``/``ainvoke`` returning with
``error.code = "timeout"`` (the overshoot), on the sync and the async path. Target: < 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_core.language_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from pydantic import PrivateAttr  # noqa: E402

from noema_graph import AgentConfig, build_agent_graph  # noqa: E402

RELEASE = threading.Event()


class BlockingModel(BaseChatModel):
    """Plans one step, then either blocks (``block_model``) or calls the blocking tool."""

    block_model: bool = True
    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "blocking"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self._calls += 1
        if self._calls == 1:
            plan = {"name": "PlanDraft", "args": {"goal": "g", "steps": ["s"]}, "id": "p"}
            message = AIMessage(content="", tool_calls=[plan])
        elif self.block_model:
            RELEASE.wait(120)
            message = AIMessage(content="late")
        else:
            message = AIMessage(content="", tool_calls=[{"name": "wait", "args": {}, "id": "w"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool
def wait() -> str:
    """Block until released."""
    RELEASE.wait(120)
    return "late"


def one(path: str, what: str, budget: float) -> float:
    """Return the seconds between the deadline and the run's return."""
    RELEASE.clear()
    config = AgentConfig(enabled_toolkits=(), timeout_s=budget, tool_timeout_s=120)
    model = BlockingModel(block_model=what == "model")
    graph = build_agent_graph(config, model=model, tools=[wait])
    inputs = {"messages": [("user", "go")]}
    if path == "sync":
        start = time.monotonic()
        state = graph.invoke(inputs)
        ended = time.monotonic()
        RELEASE.set()
    else:

        async def timed() -> tuple[Any, float, float]:
            began = time.monotonic()
            result = await graph.ainvoke(inputs)
            finished = time.monotonic()
            RELEASE.set()  # before asyncio.run waits for the abandoned call's thread
            return result, began, finished

        state, start, ended = asyncio.run(timed())
    assert state["output"]["error"]["code"] == "timeout", state["output"]["error"]
    return ended - start - budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=float, default=1.0)
    args = parser.parse_args()
    print("| path | blocked call | runs | overshoot median ms | max ms |")
    print("| --- | --- | ---: | ---: | ---: |")
    for path in ("sync", "async"):
        for what in ("model", "tool"):
            late = [one(path, what, args.budget) * 1000 for _ in range(args.runs)]
            print(
                f"| {path} | {what} | {args.runs} | {statistics.median(late):.0f} "
                f"| {max(late):.0f} |"
            )


if __name__ == "__main__":
    main()
