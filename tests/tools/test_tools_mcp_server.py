"""noema's own MCP server, loaded back through mcp_tools over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from noema_graph.agents.mcp_server import serve
from noema_graph.errors import ConfigurationError
from noema_graph.tools import mcp_tools

pytestmark = pytest.mark.mcp
REPO = Path(__file__).resolve().parents[2]


async def test_builtin_tools_round_trip_over_stdio(workdir: Path) -> None:
    server = {
        "name": "noema",
        "command": sys.executable,
        "args": ["-m", "noema_graph.agents.mcp_server", "--working-directory", str(workdir)],
        "cwd": str(REPO),
    }
    async with mcp_tools([server]) as tools:
        by_name = {tool.name: tool for tool in tools}
        assert {"noema__read_file", "noema__bash", "noema__search"} <= set(by_name)
        assert by_name["noema__read_file"].metadata["idempotency"] == "safe"

        async def run(name: str, **args: object) -> tuple[str, dict]:
            message = await by_name[name].ainvoke(
                {"type": "tool_call", "id": "1", "name": name, "args": args}
            )
            return message.status, json.loads(message.content)

        status, body = await run("noema__read_file", path="notes.txt")
        assert status == "success"
        assert json.loads(body["data"]["text"])["data"]["content"].startswith("hello world")
        status, body = await run("noema__read_file", path="../outside/secret.txt")
        assert status == "error"
        assert "path_outside_workdir" in body["error"]["message"]
        status, body = await run("noema__bash", command="echo $((6*7))")
        assert json.loads(body["data"]["text"])["data"]["output"] == "42\n"


def test_http_refuses_public_interfaces() -> None:
    with pytest.raises(ConfigurationError, match="loopback"):
        serve("http", host="0.0.0.0", port=1)
