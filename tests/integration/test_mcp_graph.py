"""MCP servers named in AgentConfig are usable by the agent graph without further code."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from noema_graph import AgentConfig, build_agent_graph
from noema_graph.graphs import aclose_tools, close_tools
from tests.helpers import PRICES
from tests.scripted import call, plan_reply, text, tools_reply
from tests.tools.conftest import TIME_SERVER, child_pids, require, wait_until

pytestmark = pytest.mark.mcp


def _config() -> AgentConfig:
    require(TIME_SERVER)
    return AgentConfig(
        enabled_toolkits=(),
        price_overrides=PRICES,
        mcp_servers=[{"name": "time", "command": str(TIME_SERVER), "args": [], "env": {}}],
    )


def _replies() -> list[Any]:
    return [
        plan_reply("get the time"),
        tools_reply(
            call("time__get_current_time", {"timezone": "UTC"}, "t1"),
            call("time__get_current_time", {"timezone": "Asia/Tokyo"}, "t2"),
        ),
        text("It is now ..."),
    ]


def _by_prompt(messages: list[BaseMessage]) -> AIMessage:
    """Answer as the scripted replies would, whichever of two concurrent runs asks."""
    plan, tools, answer = _replies()
    if "careful planner" in str(messages[0].content):
        return plan
    return answer if isinstance(messages[-1], ToolMessage) else tools


def _script(scripted: Any) -> Any:
    return scripted(*_replies())


def _check(state: dict[str, Any], model: Any) -> None:
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert set(answers) == {"t1", "t2"}
    assert all(m.status != "error" for m in answers.values()), answers
    assert "Asia/Tokyo" in str(answers["t2"].content)
    assert state["output"]["metadata"]["tools_used"] == ["time__get_current_time"]
    assert "time__get_current_time" in model.bound_tool_names[-1]


def test_sessions_belong_to_the_graph_not_to_a_run(scripted: Any) -> None:
    config = _config()
    model = scripted(*_replies(), *_replies())
    before = child_pids()
    graph = build_agent_graph(config, model=model)
    _check(graph.invoke({"messages": [("user", "time?")]}), model)
    servers = child_pids() - before
    assert len(servers) == 1  # one server process, still up for the next run
    _check(graph.invoke({"messages": [("user", "time again?")]}), model)
    assert child_pids() - before == servers  # the second run reused the session
    close_tools(graph)
    assert wait_until(lambda: child_pids() <= before, timeout=10)


def test_two_concurrent_runs_share_one_session(scripted: Any) -> None:
    config = _config()
    model = scripted(*_replies(), *[_by_prompt] * 6)
    before = child_pids()
    graph = build_agent_graph(config, model=model)
    graph.invoke({"messages": [("user", "warm up")]})  # opens the session
    servers = child_pids() - before
    with ThreadPoolExecutor(max_workers=2) as pool:
        # the scripted model answers whichever run asks first: same plan, same calls
        runs = [pool.submit(graph.invoke, {"messages": [("user", f"time {i}?")]}) for i in (1, 2)]
        states = [r.result(timeout=60) for r in runs]
    for state in states:
        _check(state, model)
    assert child_pids() - before == servers  # neither run closed the other's session
    close_tools(graph)
    assert wait_until(lambda: child_pids() <= before, timeout=10)


async def test_async_invoke(scripted: Any) -> None:
    config = _config()
    model = _script(scripted)
    graph = build_agent_graph(config, model=model)
    state = await graph.ainvoke({"messages": [("user", "t?")]})
    _check(state, model)
    await aclose_tools(graph)
