"""Serve noema's tools over MCP (stdio or streamable HTTP) with the official SDK.

The built-in toolkits always; the learning domain tools too when given a learning store.

Run ``python -m noema_graph.agents.mcp_server [--transport stdio|http] [--port N]``; the
CLI's ``noema-graph mcp serve`` calls :func:`serve`. Tools keep their noema semantics:
permissions, validation, timeouts and truncation come from the registry runner, and an
error result is returned as an MCP error (``isError``) carrying the JSON observation.
"""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path
from typing import Any, Literal

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError as MCPToolError
from mcp.server.fastmcp.tools import Tool
from mcp.server.fastmcp.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import ConfigDict

from noema_graph.config import AgentConfig
from noema_graph.errors import ConfigurationError
from noema_graph.tools.results import DEFAULT_MAX_OBSERVATION_CHARS, render_observation
from noema_graph.tools.runner import ToolRunner
from noema_graph.tools.spec import ToolContext, ToolSpec
from noema_graph.tools.toolkits import builtin_registry, working_directory_for

DEFAULT_PORT = 8765


class _RawArguments(ArgModelBase):
    """Pass the client's arguments through untouched; the noema runner validates them."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        """Return the raw arguments."""
        return dict(self.model_extra or {})


def _mcp_tool(spec: ToolSpec, runner: ToolRunner, max_chars: int) -> Tool:
    async def call(**arguments: Any) -> str:
        result = await runner.arun(spec, arguments)
        text = render_observation(result, max_chars)
        if result.status == "error":
            raise MCPToolError(text)
        return text

    return Tool(
        fn=call,
        name=spec.name,
        title=None,
        description=spec.description,
        context_kwarg=None,
        parameters=spec.json_schema(),
        fn_metadata=FuncMetadata(arg_model=_RawArguments),
        is_async=True,
        annotations=ToolAnnotations(
            readOnlyHint=spec.idempotency == "safe",
            idempotentHint=spec.idempotency in ("safe", "idempotent"),
            destructiveHint=spec.idempotency == "non_idempotent",
        ),
    )


def build_server(
    config: AgentConfig | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    learning_db: Path | None = None,
) -> FastMCP:
    """Return a FastMCP server exposing ``config``'s built-in toolkits (not started).

    ``config`` None means ``AgentConfig(working_directory=Path.cwd())``: all four toolkits
    and all permissions, confined to the current directory. With ``learning_db``, the
    learning domain tools (list_due_cards, create_cards, ...) over that store are served
    too, under the same permissions (``fs:read`` / ``fs:write``).
    """
    config = config or AgentConfig(working_directory=Path.cwd())
    context = ToolContext(
        permissions=frozenset(config.permissions),
        working_directory=working_directory_for(config),
        timeout_s=config.tool_timeout_s,
    )
    runner = ToolRunner(context)
    specs = builtin_registry(config).list()
    if learning_db is not None:
        from noema_graph.agents.domain_tools import domain_registry

        specs += domain_registry(learning_db).list()
    tools = [_mcp_tool(spec, runner, max_observation_chars) for spec in specs]
    return FastMCP("noema-graph", tools=tools, host=host, port=port, log_level="WARNING")


def serve(
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    config: AgentConfig | None = None,
    allow_remote: bool = False,
    learning_db: Path | None = None,
) -> None:
    """Serve the built-in tools until the client disconnects (stdio) or the process stops.

    Args:
        transport: ``stdio`` or ``http`` (streamable HTTP at ``http://host:port/mcp``).
        host: Interface to bind for HTTP; loopback only unless ``allow_remote``.
        port: TCP port for HTTP.
        config: Toolkits, permissions, working directory and timeout to serve with.
        allow_remote: Allow a non-loopback ``host`` (anyone reaching it can run the tools).
        learning_db: Also serve the learning domain tools over this store.

    Raises:
        ConfigurationError: Unknown transport, or a non-loopback host without
            ``allow_remote``.
    """
    if transport not in ("stdio", "http"):
        raise ConfigurationError("transport", f"{transport!r} is not 'stdio' or 'http'")
    if transport == "http" and not allow_remote and not _is_loopback(host):
        raise ConfigurationError(
            "host",
            f"{host!r} is not a loopback address; the tools include shell and file access",
            fix="bind 127.0.0.1, or pass allow_remote=True behind your own authentication",
        )
    server = build_server(config, host=host, port=port, learning_db=learning_db)
    server.run("stdio" if transport == "stdio" else "streamable-http")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> None:
    """Parse ``argv`` and call :func:`serve`."""
    parser = argparse.ArgumentParser(prog="python -m noema_graph.agents.mcp_server")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--working-directory", type=Path, default=None)
    parser.add_argument("--learning-db", type=Path, default=None)
    args = parser.parse_args(argv)
    config = AgentConfig(working_directory=(args.working_directory or Path.cwd()).resolve())
    serve(args.transport, args.host, args.port, config=config, learning_db=args.learning_db)


if __name__ == "__main__":
    main()
