"""The run's time budget stops a model or tool call in flight, on the sync and async paths.

Each test blocks a call on an event that only the test sets, after the run returned: a run
that ends with ``timeout`` while the event is still unset was not waiting for the call.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.context import RunContext
from noema_graph.graphs import build_agent_graph, build_ask_graph
from tests.helpers import cfg
from tests.scripted import call, plan_reply, text, tools_reply

PATHS = ["sync", "async"]
BUDGET_S = 0.5


def _invoke(graph: Any, path: str, release: threading.Event, **kwargs: Any) -> tuple[Any, bool]:
    """Run the graph; return its state and whether the blocked call had been released."""
    config = {"configurable": {"thread_id": "deadline"}}
    inputs = {"messages": [("user", "go")]}
    if path == "sync":
        state = graph.invoke(inputs, config, **kwargs)
        released = release.is_set()
        release.set()
        return state, released

    async def main() -> tuple[Any, bool]:
        state = await graph.ainvoke(inputs, config, **kwargs)
        released = release.is_set()
        release.set()  # before asyncio.run waits for the executor thread of the call
        return state, released

    return asyncio.run(main())


def _stuck(release: threading.Event) -> Any:
    def reply(_: list[BaseMessage]) -> Any:
        release.wait(60)
        return text("too late")

    return reply


def _timed_out(state: dict[str, Any]) -> None:
    output = state["output"]
    assert output["success"] is False
    assert output["error"]["code"] == "timeout"


@pytest.mark.parametrize("path", PATHS)
def test_model_call_in_flight_stops_at_the_deadline(path: str, scripted: Any) -> None:
    release = threading.Event()
    model = scripted(plan_reply("one", "two"), text("one done"), _stuck(release))
    graph = build_agent_graph(cfg(timeout_s=BUDGET_S), model=model, checkpointer=InMemorySaver())
    state, released = _invoke(graph, path, release)
    assert not released
    _timed_out(state)
    stopped = [s for s in state["trace"] if s.kind == "error"]
    assert stopped and "execute_step stopped" in stopped[0].thought
    assert state["output"]["result"] == "one: one done"  # the partial result


@pytest.mark.parametrize("path", PATHS)
def test_tool_call_in_flight_stops_at_the_deadline(path: str, scripted: Any) -> None:
    release = threading.Event()

    @tool
    def wait_forever() -> str:
        """Block until the test releases it."""
        release.wait(60)
        return "done"

    model = scripted(plan_reply("one"), tools_reply(call("wait_forever")))
    config = cfg(timeout_s=60, tool_timeout_s=60)
    graph = build_agent_graph(config, model=model, tools=[wait_forever])
    context = RunContext(timeout_s=BUDGET_S)  # the context's budget wins over the config's
    state, released = _invoke(graph, path, release, context=context)
    assert not released
    _timed_out(state)
    answers = [m for m in state["messages"] if m.type == "tool"]
    assert "time budget ran out during 'wait_forever'" in answers[0].content
    assert answers[0].status == "error"


@pytest.mark.parametrize("path", PATHS)
def test_planning_call_in_flight_stops_at_the_deadline(path: str, scripted: Any) -> None:
    release = threading.Event()
    model = scripted(_stuck(release))
    graph = build_agent_graph(cfg(timeout_s=BUDGET_S), model=model)
    state, released = _invoke(graph, path, release)
    assert not released
    _timed_out(state)
    assert state["trace"][0].thought.startswith("planning failed")


@pytest.mark.parametrize("path", PATHS)
def test_ask_answer_in_flight_stops_at_the_deadline(path: str, scripted: Any) -> None:
    release = threading.Event()
    model = scripted(_stuck(release))
    graph = build_ask_graph(cfg(timeout_s=BUDGET_S), model=model)
    state, released = _invoke(graph, path, release)
    assert not released
    _timed_out(state)


def test_no_budget_runs_calls_inline(scripted: Any) -> None:
    """Without a time budget nothing waits on a deadline: the model runs in the caller's thread."""
    threads: list[str] = []

    def record(_: list[BaseMessage]) -> Any:
        threads.append(threading.current_thread().name)
        return text("done")

    model = scripted(plan_reply("one"), record)
    graph = build_agent_graph(cfg(timeout_s=None), model=model)
    state = graph.invoke({"messages": [("user", "go")]})
    assert state["output"]["success"] is True
    assert threads and not threads[0].startswith("noema-call")
