"""One persistent MCP session per server, owned by one task, restarted when the server dies.

The session context (``MultiServerMCPClient.session`` + ``load_mcp_tools``) is entered and
exited by the same long-lived owner task, so teardown never crosses anyio cancel scopes.
Callers in the same event loop use :meth:`ServerSession.call`, which turns every outcome
into a :class:`ToolResult`.

Calls go to ``ClientSession.call_tool`` directly rather than through the adapter tools'
coroutine: that coroutine cannot pass a request's ``_meta``, and langchain-mcp-adapters 0.3.2
offers no hook that reaches it (its interceptors see only name, arguments and HTTP headers).
The adapter's own converter still turns the result into content blocks and an artifact.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Mapping
from datetime import timedelta

import anyio
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.sessions import Connection
from langchain_mcp_adapters.tools import (
    _convert_call_tool_result,  # pyright: ignore[reportPrivateUsage] -- the converter the adapter's tools use; calls bypass them to send _meta
    load_mcp_tools,
)
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from mcp.types import CONNECTION_CLOSED
from pydantic import ValidationError

from noema_graph.config import MCPServer
from noema_graph.errors import ToolError
from noema_graph.tools.results import ToolResult

logger = logging.getLogger(__name__)


def _usable_stderr() -> None:
    """Point mcp's ``stdio_client`` default ``errlog`` at the process's stderr if need be.

    mcp binds ``sys.stderr`` as that default when ``mcp.client.stdio`` is first imported; an
    import made while stderr is captured (a CLI test runner, some notebook kernels) leaves a
    stream without a file descriptor there, and every server then fails to start with
    ``UnsupportedOperation: fileno``. The server's stderr must be a real file.
    """
    from mcp.client import stdio

    original = getattr(stdio.stdio_client, "__wrapped__", None)
    defaults = getattr(original, "__defaults__", None)
    if original is None or not defaults:
        return
    try:
        defaults[0].fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        original.__defaults__ = (sys.__stderr__, *defaults[1:])


_usable_stderr()

_REQUEST_TIMEOUT = 408
_CLOSE_TIMEOUT_S = 5.0
_DEAD_SESSION_ERRORS: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    BrokenPipeError,
    ConnectionError,
)


def connection_for(server: MCPServer) -> Connection:
    """Return the langchain-mcp-adapters connection for ``server``, with its timeouts.

    The read timeout is set on the ``ClientSession`` so every request (``initialize`` and
    tool calls included) gives up instead of hanging on a silent server.
    """
    session_kwargs: dict[str, object] = {
        "read_timeout_seconds": timedelta(seconds=server.read_timeout_s)
    }
    if server.command is not None:
        return {
            "transport": "stdio",
            "command": server.command,
            "args": list(server.args),
            "env": dict(server.env) or None,
            "cwd": server.cwd,
            "session_kwargs": session_kwargs,
        }
    assert server.url is not None
    return {
        "transport": "streamable_http",
        "url": server.url,
        "headers": dict(server.headers) or None,
        "timeout": server.connect_timeout_s,
        "sse_read_timeout": server.read_timeout_s,
        "session_kwargs": session_kwargs,
    }


class ServerSession:
    """The live session to one MCP server and the adapter tools bound to it."""

    def __init__(self, server: MCPServer, *, max_restarts: int = 3) -> None:
        """Prepare (not open) the session to ``server``; it restarts at most ``max_restarts``."""
        self.server = server
        self.max_restarts = max_restarts
        self.restarts = 0
        self.tools: dict[str, StructuredTool] = {}
        self._client = MultiServerMCPClient({server.name: connection_for(server)})
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._alive = False
        self._restart_lock: asyncio.Lock | None = None

    @property
    def alive(self) -> bool:
        """Whether the session is open and its server has not been seen dying."""
        return self._alive and self._session is not None

    async def start(self) -> list[BaseTool]:
        """Open the session within ``connect_timeout_s`` and return the server's tools.

        Raises:
            ToolError: The server could not be started, initialised or listed in time.
        """
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[list[BaseTool]] = loop.create_future()
        self._stop = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp:{self.server.name}")
        try:
            tools = await asyncio.wait_for(asyncio.shield(ready), self.server.connect_timeout_s)
        except TimeoutError:
            await self._shutdown()
            msg = (
                f"MCP server {self.server.name!r} did not start within "
                f"{self.server.connect_timeout_s:g}s (connect_timeout_s)"
            )
            raise ToolError(msg) from None
        except (McpError, OSError, ExceptionGroup, ValidationError) as exc:
            await self._shutdown()
            msg = f"MCP server {self.server.name!r} failed to start: {_describe(exc)}"
            raise ToolError(msg) from exc
        self.tools = {tool.name: tool for tool in tools if isinstance(tool, StructuredTool)}
        self._alive = True
        return tools

    async def _own(self, ready: asyncio.Future[list[BaseTool]]) -> None:
        """Hold the session open until asked to stop; the only task that enters or exits it."""
        assert self._stop is not None
        try:
            async with self._client.session(self.server.name) as session:
                tools = await load_mcp_tools(session, server_name=self.server.name)
                self._session = session
                if not ready.done():
                    ready.set_result(tools)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                logger.debug("MCP session %r ended: %s", self.server.name, _describe(exc))
        finally:
            self._alive = False
            self._session = None

    async def close(self) -> None:
        """Close the session and stop the server process."""
        self._alive = False
        await self._shutdown()

    async def _shutdown(self) -> None:
        owner, self._owner = self._owner, None
        if owner is None or owner.done():
            return
        if self._stop is not None:
            self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), _CLOSE_TIMEOUT_S)
        except TimeoutError:
            owner.cancel()
            await asyncio.gather(owner, return_exceptions=True)

    async def call(
        self,
        tool_name: str,
        arguments: dict[str, object],
        *,
        meta: Mapping[str, object] | None = None,
    ) -> ToolResult:
        """Call ``tool_name`` on the live session; every outcome is a :class:`ToolResult`.

        ``meta`` becomes the ``_meta`` of the ``tools/call`` request (trace context, for
        instance); empty or None sends none. A dead server (closed stream, broken pipe) is
        restarted once, here, and the result says so; the next call runs on the new session.
        """
        if not self.alive:
            failure = await self._restart("the session is closed")
            if failure is not None:
                return failure
        if tool_name not in self.tools:
            return ToolResult.fail(
                "not_found",
                f"MCP server {self.server.name!r} has no tool {tool_name!r}",
                recoverable=False,
            )
        return await self._invoke(tool_name, arguments, dict(meta) if meta else None)

    async def _invoke(
        self, tool_name: str, arguments: dict[str, object], meta: dict[str, object] | None
    ) -> ToolResult:
        session = self._session
        assert session is not None
        try:
            result = await session.call_tool(tool_name, arguments, meta=meta)
            content, artifact = _convert_call_tool_result(result)
        except _DEAD_SESSION_ERRORS as exc:
            return await self._died(exc)
        except McpError as exc:
            return await self._on_mcp_error(tool_name, exc)
        except ToolException as exc:
            return ToolResult.fail("mcp_tool_error", str(exc), details={"server": self.server.name})
        except ValidationError as exc:
            return ToolResult.fail(
                "mcp_invalid_response",
                f"MCP server {self.server.name!r} sent a malformed result for {tool_name!r} "
                f"({exc.error_count()} validation errors)",
                details={"errors": str(exc)[:2000]},
            )
        return ToolResult.ok(_content_data(content, artifact))

    async def _timed_out(self, tool_name: str) -> ToolResult:
        """Answer a read timeout, and restart the server: it may have died or hung silently.

        A server killed right before a call can look like a silent one (the request is
        written, no answer ever comes), so both get the same recovery.
        """
        message = (
            f"timeout: MCP server {self.server.name!r} did not answer {tool_name!r} "
            f"within {self.server.read_timeout_s:g}s (read_timeout_s)"
        )
        self._alive = False
        failure = await self._restart("no answer within read_timeout_s")
        restarted = failure is None
        return ToolResult.fail(
            "timeout",
            message + ("; the server was restarted" if restarted else ""),
            details={"server": self.server.name, "restarted": restarted},
        )

    async def _on_mcp_error(self, tool_name: str, exc: McpError) -> ToolResult:
        if exc.error.code == CONNECTION_CLOSED:
            return await self._died(exc)
        if exc.error.code == _REQUEST_TIMEOUT:
            return await self._timed_out(tool_name)
        return ToolResult.fail("mcp_error", exc.error.message, details={"code": exc.error.code})

    async def _died(self, exc: BaseException) -> ToolResult:
        self._alive = False
        failure = await self._restart(_describe(exc))
        if failure is not None:
            return failure
        return ToolResult.fail(
            "mcp_server_restarted",
            f"MCP server {self.server.name!r} stopped during the call ({_describe(exc)}); it was "
            "restarted, retry the call if it is still needed",
            details={"server": self.server.name, "restarts": self.restarts},
        )

    async def _restart(self, reason: str) -> ToolResult | None:
        """Restart the session once; return an error result when that is not possible."""
        if self._restart_lock is None:
            self._restart_lock = asyncio.Lock()
        async with self._restart_lock:
            if self.alive:
                return None
            if self.restarts >= self.max_restarts:
                return ToolResult.fail(
                    "mcp_server_unavailable",
                    f"MCP server {self.server.name!r} is down ({reason}) and was already "
                    f"restarted {self.restarts} times",
                    recoverable=False,
                )
            self.restarts += 1
            logger.info("restarting MCP server %r: %s", self.server.name, reason)
            await self._shutdown()
            try:
                await self.start()
            except ToolError as exc:
                return ToolResult.fail("mcp_server_unavailable", str(exc), recoverable=False)
            return None


def _content_data(content: object, artifact: object) -> dict[str, object]:
    """Turn the adapter's (content blocks, artifact) pair into ``ToolResult.data``."""
    blocks: list[object] = list(content) if isinstance(content, list) else [content]
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    data: dict[str, object] = {}
    if len(texts) == len(blocks):
        data["text"] = "\n".join(str(text) for text in texts)
    else:
        data["content"] = blocks
    if isinstance(artifact, dict) and artifact.get("structured_content") is not None:
        data["structured"] = artifact["structured_content"]
    return data


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
