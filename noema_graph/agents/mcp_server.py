"""Serve noema's tools over MCP (stdio or streamable HTTP) with the official SDK.

The built-in toolkits always; the learning domain tools too when given a learning store.

Run ``python -m noema_graph.agents.mcp_server [--transport stdio|http] [--port N]``; the
CLI's ``noema-graph mcp serve`` calls :func:`serve`. Tools keep their noema semantics:
permissions, validation, timeouts and truncation come from the registry runner, and an
error result is returned as an MCP error (``isError``) carrying the JSON observation.

The learning domain tools' writes go to the change journal as a graph run's do
(:mod:`noema_graph.agents.journaling`): each MCP session (a stdio server's one client, an
HTTP client's ``Mcp-Session-Id``) is a journal thread of its own, ``mcp-`` and 12 hex
digits, its write calls numbered as steps from 1 and known by their JSON-RPC request ids. A
write's result names the thread in its ``message``, so that ``noema-graph changes THREAD``
and ``noema-graph undo THREAD [--step N]`` (with the server's ``--data``) review and revert
what the session wrote.
"""

from __future__ import annotations

import argparse
import ipaddress
import itertools
import threading
import weakref
from pathlib import Path
from typing import Any, Literal
from uuid import uuid4

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError as MCPToolError
from mcp.server.fastmcp.tools import Tool
from mcp.server.fastmcp.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import ConfigDict

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext, RunScope, run_scope
from noema_graph.errors import ConfigurationError
from noema_graph.tools.results import (
    DEFAULT_MAX_OBSERVATION_CHARS,
    ToolResult,
    render_observation,
)
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


class SessionThreads:
    """The journal thread of each MCP session of one server, and its calls' steps.

    A session is the SDK's session object (one per stdio client or HTTP session); a call
    made outside any session (the server called in-process) belongs to one thread of the
    server's own.
    """

    def __init__(self) -> None:
        """Start with no session."""
        self._threads: weakref.WeakKeyDictionary[object, tuple[str, itertools.count[int]]]
        self._threads = weakref.WeakKeyDictionary()
        self._own = (new_thread_id(), itertools.count(1))
        self._lock = threading.Lock()

    def scope(self, context: Context[Any, Any, Any] | None) -> RunScope:
        """Return the run scope of one tool call of ``context``'s session."""
        session, request = _session_of(context)
        with self._lock:
            if session is None:
                thread, steps = self._own
            else:
                thread, steps = self._threads.setdefault(
                    session, (new_thread_id(), itertools.count(1))
                )
            step = next(steps)
        call = f"mcp-{request}" if request is not None else uuid4().hex[:12]
        return RunScope(thread, thread, RunContext(), thread_id=thread, call_id=call, step=step)


def new_thread_id() -> str:
    """Return a new journal thread id for an MCP session (``mcp-`` and 12 hex digits)."""
    return f"mcp-{uuid4().hex[:12]}"


def _session_of(context: Context[Any, Any, Any] | None) -> tuple[object | None, str | None]:
    """Return the session and request id of a tool call's context (None outside a request)."""
    if context is None:
        return None, None
    try:
        request = context.request_context
    except ValueError:  # the SDK's "not available outside of a request"
        return None, None
    return request.session, str(request.request_id)


def _journal_note(result: ToolResult, thread: str) -> ToolResult:
    """Return ``result`` with its message naming the journal thread of the session."""
    note = (
        f"journaled as thread {thread}: review with `noema-graph changes {thread}`, "
        f"revert with `noema-graph undo {thread}` (with this server's --data)"
    )
    message = f"{result.message}; {note}" if result.message else note
    return result.model_copy(update={"message": message})


def _mcp_tool(
    spec: ToolSpec, runner: ToolRunner, max_chars: int, threads: SessionThreads | None = None
) -> Tool:
    """Return the MCP tool of ``spec``; with ``threads``, its calls run journaled."""

    async def call(**arguments: Any) -> str:
        context: Context[Any, Any, Any] | None = arguments.pop(_CONTEXT, None)
        if threads is None:
            result = await runner.arun(spec, arguments)
        else:
            scope = threads.scope(context)
            with run_scope(scope):  # the runner's worker thread inherits it
                result = await runner.arun(spec, arguments)
            if result.status == "success" and scope.thread_id is not None:
                result = _journal_note(result, scope.thread_id)
        text = render_observation(result, max_chars)
        if result.status == "error":
            raise MCPToolError(text)
        return text

    return Tool(
        fn=call,
        name=spec.name,
        title=None,
        description=spec.description,
        context_kwarg=_CONTEXT,
        parameters=spec.json_schema(),
        fn_metadata=FuncMetadata(arg_model=_RawArguments),
        is_async=True,
        annotations=ToolAnnotations(
            readOnlyHint=spec.idempotency == "safe",
            idempotentHint=spec.idempotency in ("safe", "idempotent"),
            destructiveHint=spec.idempotency == "non_idempotent",
        ),
    )


_CONTEXT = "_noema_mcp_context"
"""The keyword the SDK passes a call's context under (it overrides a client's argument)."""


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
    too, under the same permissions (``fs:read`` / ``fs:write``); their writes are
    journaled, one thread per MCP session (see the module docstring).
    """
    config = config or AgentConfig(working_directory=Path.cwd())
    context = ToolContext(
        permissions=frozenset(config.permissions),
        working_directory=working_directory_for(config),
        timeout_s=config.tool_timeout_s,
    )
    runner = ToolRunner(context)
    tools = [
        _mcp_tool(spec, runner, max_observation_chars) for spec in builtin_registry(config).list()
    ]
    if learning_db is not None:
        from noema_graph.agents.domain_tools import domain_registry
        from noema_graph.noema.operations import DOMAIN_OPERATIONS

        threads = SessionThreads()
        for spec in domain_registry(learning_db).list():
            writes = DOMAIN_OPERATIONS[spec.name].writes
            tools.append(
                _mcp_tool(spec, runner, max_observation_chars, threads if writes else None)
            )
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
