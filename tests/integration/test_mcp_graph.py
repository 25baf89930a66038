"""MCP servers named in AgentConfig are usable by the agent graph without further code."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from noema_graph import AgentConfig, build_agent_graph
from tests.core.helpers import PRICES
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


def _script(scripted: Any) -> Any:
    return scripted(
        plan_reply("get the time"),
        tools_reply(
            call("time__get_current_time", {"timezone": "UTC"}, "t1"),
            call("time__get_current_time", {"timezone": "Asia/Tokyo"}, "t2"),
        ),
        text("It is now ..."),
    )


def _check(state: dict[str, Any], model: Any) -> None:
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert set(answers) == {"t1", "t2"}
    assert all(m.status != "error" for m in answers.values()), answers
    assert "Asia/Tokyo" in str(answers["t2"].content)
    assert state["output"]["metadata"]["tools_used"] == ["time__get_current_time"]
    assert "time__get_current_time" in model.bound_tool_names[-1]


def test_sync_invoke_opens_and_closes_the_session(scripted: Any) -> None:
    config = _config()
    model = _script(scripted)
    before = child_pids()
    state = build_agent_graph(config, model=model).invoke({"messages": [("user", "time?")]})
    _check(state, model)
    # finalize closed the session: no server process of this run is left behind
    assert wait_until(lambda: child_pids() <= before, timeout=10)


async def test_async_invoke(scripted: Any) -> None:
    config = _config()
    model = _script(scripted)
    state = await build_agent_graph(config, model=model).ainvoke({"messages": [("user", "t?")]})
    _check(state, model)
