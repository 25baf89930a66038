"""The caller's trace reaches an MCP server as the ``_meta`` of its ``tools/call`` request.

``fake_servers/echo_meta.py`` is a FastMCP server, run over stdio, whose tool answers with the
``_meta`` it received; calls go through the provider's background loop as the agent's do.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import FAKE_SERVERS, child_pids, wait_until
from langchain_core.tools import BaseTool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Tracer

from noema_graph.config import MCPServer
from noema_graph.context import RunContext, RunScope, run_scope
from noema_graph.tools import MCPToolProvider

pytestmark = pytest.mark.mcp

SCOPE = RunScope(trace_id="run-trace-7", run_id="run-7", context=RunContext())


def echo_server(**kwargs: Any) -> MCPServer:
    return MCPServer(
        name="echo", command=sys.executable, args=(str(FAKE_SERVERS / "echo_meta.py"),), **kwargs
    )


@pytest.fixture
def tracer() -> Iterator[Tracer]:
    provider = TracerProvider()
    yield provider.get_tracer("test")
    provider.shutdown()


@pytest.fixture
def echo() -> Iterator[BaseTool]:
    with MCPToolProvider([echo_server()]) as provider:
        (tool,) = provider.get_tools()
        assert tool.name == "echo__echo_meta"
        yield tool


def tool_call(tool: BaseTool) -> dict[str, Any]:
    return {"type": "tool_call", "id": "c1", "name": tool.name, "args": {}}


def received(message: Any) -> dict[str, Any] | None:
    """Return the ``_meta`` the server saw, from the tool's ToolMessage."""
    assert message.status == "success", message.content
    return json.loads(json.loads(message.content)["data"]["text"])


def traceparent(span: Span) -> str:
    ctx = span.get_span_context()
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{ctx.trace_flags:02x}"


def expected(span: Span, scope: RunScope) -> dict[str, str]:
    return {
        "traceparent": traceparent(span),
        "noema.trace_id": scope.trace_id,
        "noema.run_id": scope.run_id,
    }


def test_sync_call_sends_the_current_span_and_run(echo: BaseTool, tracer: Tracer) -> None:
    with tracer.start_as_current_span("caller") as span, run_scope(SCOPE):
        meta = received(echo.invoke(tool_call(echo)))
    assert meta == expected(span, SCOPE)


async def test_concurrent_async_calls_each_send_their_own_trace(
    echo: BaseTool, tracer: Tracer
) -> None:
    async def traced(run: str) -> tuple[dict[str, str], dict[str, Any] | None]:
        scope = RunScope(trace_id=f"trace-{run}", run_id=run, context=RunContext())
        with tracer.start_as_current_span(run) as span, run_scope(scope):
            message = await echo.ainvoke(tool_call(echo))
        return expected(span, scope), received(message)

    (want_a, got_a), (want_b, got_b) = await asyncio.gather(traced("a"), traced("b"))
    assert got_a == want_a
    assert got_b == want_b
    assert want_a["traceparent"] != want_b["traceparent"]


def test_without_span_or_run_no_meta_is_sent(echo: BaseTool) -> None:
    assert received(echo.invoke(tool_call(echo))) is None
    # a run without OpenTelemetry still names its trace
    with run_scope(SCOPE):
        assert received(echo.invoke(tool_call(echo))) == {
            "noema.trace_id": "run-trace-7",
            "noema.run_id": "run-7",
        }
    # nothing sticks to the session from one call to the next
    assert received(echo.invoke(tool_call(echo))) is None


def test_restarted_server_still_receives_the_trace(tracer: Tracer) -> None:
    before = child_pids()
    with MCPToolProvider([echo_server(read_timeout_s=5)]) as provider:
        (tool,) = provider.get_tools()
        (old,) = child_pids() - before
        os.kill(old, signal.SIGKILL)
        assert wait_until(lambda: old not in child_pids() or _is_zombie(old))
        first = tool.invoke(tool_call(tool))
        assert first.status == "error"
        assert json.loads(first.content)["error"]["type"] in ("mcp_server_restarted", "timeout")
        with tracer.start_as_current_span("after restart") as span, run_scope(SCOPE):
            meta = received(tool.invoke(tool_call(tool)))
        assert meta == expected(span, SCOPE)
        assert provider.sessions["echo"].restarts == 1


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
