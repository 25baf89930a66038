"""An agent run's trace reaches the MCP servers it calls, in each request's ``_meta``."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from noema_graph.config import MCPServer
from noema_graph.context import RunContext
from noema_graph.graphs import build_agent_graph
from noema_graph.observability import otel_trace_id
from noema_graph.tools import MCPToolProvider, mcp_tools
from tests.helpers import cfg
from tests.observability.conftest import Telemetry
from tests.scripted import call, plan_reply, text, tools_reply
from tests.tools.conftest import FAKE_SERVERS

pytestmark = pytest.mark.mcp

ECHO = MCPServer(name="echo", command=sys.executable, args=(str(FAKE_SERVERS / "echo_meta.py"),))


def _script(scripted: Any) -> Any:
    return scripted(
        plan_reply("echo the request metadata"),
        tools_reply(call("echo__echo_meta", {}, "c1")),
        text("done"),
    )


def _check(telemetry: Telemetry, state: dict[str, Any]) -> None:
    """Assert the server saw the run's ids and the tool node's span as the parent."""
    (answer,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answer.status == "success", answer.content
    meta = json.loads(json.loads(answer.content)["data"]["text"])
    run = state["run"]
    assert meta["noema.trace_id"] == run.trace_id
    assert meta["noema.run_id"] == run.run_id
    version, trace, parent, _flags = meta["traceparent"].split("-")
    assert version == "00"
    assert int(trace, 16) == otel_trace_id(run.trace_id)
    (tool_node,) = [s for s in telemetry.spans() if s.name == "node tool_node"]
    assert tool_node.context is not None
    assert int(parent, 16) == tool_node.context.span_id


def test_a_run_sends_its_trace_to_the_mcp_server(telemetry: Telemetry, scripted: Any) -> None:
    with MCPToolProvider([ECHO]) as provider:
        state = telemetry.run(_script(scripted), tools=provider.get_tools())
    _check(telemetry, state)


async def test_an_async_run_sends_its_own_trace_id(telemetry: Telemetry, scripted: Any) -> None:
    async with mcp_tools([ECHO]) as tools:
        graph = build_agent_graph(
            cfg(), model=_script(scripted), tools=tools, observer=telemetry.observer
        )
        state = await graph.ainvoke(
            {"messages": [("user", "echo")]}, context=RunContext(trace_id="req-mcp-1")
        )
    assert state["run"].trace_id == "req-mcp-1"
    _check(telemetry, state)
