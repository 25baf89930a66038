"""MCP tools against real servers written by others (installed by install_mcp_servers.sh).

One persistent session per server: the server pid must not change between calls, a killed
server must be restarted, a silent or garbage server must never hang the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    EVERYTHING_SERVER,
    FAKE_SERVERS,
    FILESYSTEM_SERVER,
    GIT_SERVER,
    TIME_SERVER,
    child_pids,
    require,
    wait_until,
)
from langchain_core.tools import BaseTool

from noema_graph.config import MCPServer
from noema_graph.errors import ConfigurationError, ToolError
from noema_graph.tools import MCPToolProvider, mcp_tools

pytestmark = pytest.mark.mcp


def by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in tools}


def call(tool: BaseTool, **args: object) -> tuple[str, dict]:
    message = tool.invoke({"type": "tool_call", "id": "c", "name": tool.name, "args": args})
    return message.status, json.loads(message.content)


async def acall(tool: BaseTool, **args: object) -> tuple[str, dict]:
    message = await tool.ainvoke({"type": "tool_call", "id": "c", "name": tool.name, "args": args})
    return message.status, json.loads(message.content)


def time_server(**kwargs: object) -> MCPServer:
    require(TIME_SERVER)
    return MCPServer(
        name="time", command=str(TIME_SERVER), args=("--local-timezone", "UTC"), **kwargs
    )


def test_time_server_over_stdio_reuses_one_process() -> None:
    before = child_pids()
    with MCPToolProvider([time_server()]) as provider:
        tool = by_name(provider.get_tools())["time__get_current_time"]
        assert tool.metadata == {"idempotency": "safe", "permission": None}
        servers = child_pids() - before
        assert len(servers) == 1
        for zone in ("UTC", "Asia/Tokyo", "America/New_York"):
            status, body = call(tool, timezone=zone)
            assert status == "success"
            assert body["data"]["structured"]["timezone"] == zone
        assert child_pids() - before == servers, "a new server process was started"
        provider.get_tools()
        assert child_pids() - before == servers
    assert wait_until(lambda: not (child_pids() & servers))


async def test_mcp_tools_async_context_and_invalid_input() -> None:
    async with mcp_tools([time_server()]) as tools:
        tool = by_name(tools)["time__convert_time"]
        status, body = await acall(tool, source_timezone="UTC", time="12:00")
        assert status == "error"
        assert body["error"]["type"] == "invalid_input"
        assert "target_timezone" in body["error"]["message"]
        status, body = await acall(
            tool, source_timezone="UTC", time="12:00", target_timezone="Europe/Paris"
        )
        assert status == "success", body
        # The server's own error (bad zone) is an observation too.
        status, body = await acall(
            tool, source_timezone="Mars/Olympus", time="12:00", target_timezone="UTC"
        )
        assert (status, body["error"]["type"]) == ("error", "mcp_tool_error")


def test_git_server(tmp_path: Path) -> None:
    require(GIT_SERVER)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.txt").write_text("a")
    server = MCPServer(name="git", command=str(GIT_SERVER), args=("--repository", str(tmp_path)))
    with MCPToolProvider([server]) as provider:
        status, body = call(
            by_name(provider.get_tools())["git__git_status"], repo_path=str(tmp_path)
        )
    assert status == "success"
    assert "a.txt" in body["data"]["text"]


def test_filesystem_server_confined_to_tmp_dir(tmp_path: Path) -> None:
    require(FILESYSTEM_SERVER)
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "in.txt").write_text("inside")
    (tmp_path / "out.txt").write_text("outside")
    server = MCPServer(name="fs", command="node", args=(str(FILESYSTEM_SERVER), str(allowed)))
    with MCPToolProvider([server]) as provider:
        tools = by_name(provider.get_tools())
        status, body = call(tools["fs__read_text_file"], path=str(allowed / "in.txt"))
        assert (status, body["data"]["text"]) == ("success", "inside")
        status, body = call(tools["fs__read_text_file"], path=str(tmp_path / "out.txt"))
        assert status == "error"
        assert "outside" not in json.dumps(body.get("data"))
        status, _ = call(tools["fs__write_file"], path=str(tmp_path / "pwn.txt"), content="x")
        assert status == "error"
    assert not (tmp_path / "pwn.txt").exists()


def test_everything_server_over_stdio() -> None:
    require(EVERYTHING_SERVER)
    server = MCPServer(name="everything", command="node", args=(str(EVERYTHING_SERVER), "stdio"))
    with MCPToolProvider([server]) as provider:
        tools = by_name(provider.get_tools())
        status, body = call(tools["everything__echo"], message="hi")
        assert status == "success"
        assert "hi" in body["data"]["text"]
        status, body = call(tools["everything__get-sum"], a=2, b=3)
        assert "5" in body["data"]["text"]
        status, body = call(tools["everything__get-tiny-image"])
        assert status == "success"
        assert any(block.get("type") == "image" for block in body["data"]["content"])


async def test_everything_server_over_streamable_http(everything_http: str) -> None:
    server = MCPServer(name="web", url=everything_http, connect_timeout_s=10, read_timeout_s=10)
    async with mcp_tools([server]) as tools:
        tool = by_name(tools)["web__echo"]
        for word in ("one", "two"):
            status, body = await acall(tool, message=word)
            assert status == "success"
            assert word in body["data"]["text"]
        # sync invoke of the same tool, from inside the event loop's thread, also works
        status, body = call(tool, message="sync")
        assert status == "success"


def test_killed_server_gives_error_then_restarts() -> None:
    before = child_pids()
    with MCPToolProvider([time_server()]) as provider:
        tool = by_name(provider.get_tools())["time__get_current_time"]
        assert call(tool, timezone="UTC")[0] == "success"
        (old,) = child_pids() - before
        os.kill(old, signal.SIGKILL)
        assert wait_until(lambda: old not in child_pids() or _is_zombie(old))
        status, body = call(tool, timezone="UTC")
        assert status == "error"
        # a dead pipe is seen at once (restarted); if the request was written before the
        # death was noticed, the read timeout fires and the server is restarted as well
        assert body["error"]["type"] in ("mcp_server_restarted", "timeout"), body
        status, body = call(tool, timezone="UTC")
        assert status == "success"
        (new,) = child_pids() - before
        assert new != old
        assert provider.sessions["time"].restarts == 1


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_silent_server_times_out_without_hanging() -> None:
    server = MCPServer(
        name="silent",
        command=sys.executable,
        args=(str(FAKE_SERVERS / "silent.py"),),
        connect_timeout_s=1,
        read_timeout_s=1,
    )
    started = time.monotonic()
    provider = MCPToolProvider([server])
    with pytest.raises(ToolError, match=r"did not start within 1s|failed to start"):
        provider.get_tools()
    provider.close()
    assert time.monotonic() - started < 10


async def test_garbage_server_gives_error_observations() -> None:
    server = MCPServer(
        name="junk",
        command=sys.executable,
        args=(str(FAKE_SERVERS / "garbage.py"),),
        read_timeout_s=1,
    )
    async with mcp_tools([server]) as tools:
        status, body = await acall(by_name(tools)["junk__mangled"])
        assert (status, body["error"]["type"]) == ("error", "mcp_invalid_response")
        started = time.monotonic()
        status, body = await acall(by_name(tools)["junk__noise"])
        assert (status, body["error"]["type"]) == ("error", "timeout")
        assert time.monotonic() - started < 5


def test_invalid_server_config_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"mcp_servers\[0\]"):
        MCPToolProvider([{"name": "x"}])
    with pytest.raises(ConfigurationError, match="duplicate"):
        MCPToolProvider([time_server(), time_server()])


def test_missing_command_fails_fast() -> None:
    provider = MCPToolProvider([{"name": "nope", "command": "/nonexistent/server"}])
    with pytest.raises(ToolError, match="'nope' failed to start"):
        provider.get_tools()
    provider.close()


def test_mcp_servers_get_a_real_stderr_even_if_imported_under_capture() -> None:
    """mcp binds sys.stderr at import; a captured stream there would break every server."""
    import io

    from mcp.client import stdio

    from noema_graph.tools import mcp_session

    original = stdio.stdio_client.__wrapped__  # type: ignore[attr-defined]
    saved = original.__defaults__
    try:
        original.__defaults__ = (io.StringIO(),)
        mcp_session._usable_stderr()  # pyright: ignore[reportPrivateUsage]
        assert original.__defaults__[0] is sys.__stderr__
    finally:
        original.__defaults__ = saved
