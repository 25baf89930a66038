"""Load MCP servers' tools once per run and use them from sync and async code alike.

:class:`MCPToolProvider` runs one background thread with its own event loop. Each server's
session is opened there at first use and owned by one task (see :mod:`mcp_session`); tool
calls are submitted to that loop with ``asyncio.run_coroutine_threadsafe`` (awaited through
``asyncio.wrap_future`` in async code), so ``tool.invoke`` and ``tool.ainvoke`` both work
from any thread or loop, and one server process serves every call of the run.

Context variables (the run scope, the current OpenTelemetry span) do not follow a call onto
that loop, so each call captures :func:`propagation_meta` in the caller first and hands it
to the session, which sends it as the ``_meta`` of the ``tools/call`` request.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import re
import threading
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

from langchain_core.tools import BaseTool
from pydantic import ValidationError

from noema_graph.closing import Closeable
from noema_graph.config import MCPServer
from noema_graph.errors import ConfigurationError, ToolError
from noema_graph.observability.tracing import propagation_meta
from noema_graph.schemas import check_tool_schemas
from noema_graph.tools.registry import ToolRegistry
from noema_graph.tools.results import DEFAULT_MAX_OBSERVATION_CHARS, ToolResult
from noema_graph.tools.spec import Idempotency, ToolSpec

if TYPE_CHECKING:  # the MCP client stack loads when the first session opens
    from noema_graph.tools.mcp_session import ServerSession

_T = TypeVar("_T")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")
_CLOSE_TIMEOUT_S = 15.0


def _as_servers(servers: Sequence[MCPServer | Mapping[str, object]]) -> tuple[MCPServer, ...]:
    parsed: list[MCPServer] = []
    for index, server in enumerate(servers):
        if isinstance(server, MCPServer):
            parsed.append(server)
            continue
        try:
            parsed.append(MCPServer.model_validate(dict(server)))
        except ValidationError as exc:
            error = exc.errors()[0]
            raise ConfigurationError(
                f"mcp_servers[{index}]", error["msg"], fix="see MCPServer's fields"
            ) from None
    names = [server.name for server in parsed]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError("mcp_servers", f"duplicate server names {duplicates}")
    return tuple(parsed)


def _idempotency(metadata: Mapping[str, object] | None) -> Idempotency:
    """Map MCP tool annotations to an idempotency class (unknown means non-idempotent)."""
    if not metadata:
        return "non_idempotent"
    if metadata.get("readOnlyHint"):
        return "safe"
    if metadata.get("idempotentHint"):
        return "idempotent"
    return "non_idempotent"


class MCPToolProvider(Closeable):
    """MCP tools with one persistent session per server, usable from sync and async code.

    Sessions open at the first :meth:`get_tools`/:meth:`aget_tools` and serve every later
    call, including concurrent runs of the same graph; :meth:`close` or :meth:`aclose` stops
    every server, and the process's exit does it for a provider still open. Tool names are
    ``<server>__<tool>``.
    """

    def __init__(
        self,
        servers: Sequence[MCPServer | Mapping[str, object]],
        *,
        max_restarts: int = 3,
        max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    ) -> None:
        """Validate ``servers``; nothing is started yet.

        Args:
            servers: Server configs (``MCPServer`` or dicts of its fields).
            max_restarts: Restarts allowed per server after it dies, for the whole run.
            max_observation_chars: Cap on the observation text the model reads.
        """
        self.servers = _as_servers(servers)
        self.max_restarts = max_restarts
        self.max_observation_chars = max_observation_chars
        self.sessions: dict[str, ServerSession] = {}
        self._tools: list[BaseTool] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._start_lock: asyncio.Lock | None = None

    def get_tools(self) -> list[BaseTool]:
        """Start the sessions when needed and return every server's tools (blocking)."""
        return self._submit(self._astart).result()

    async def aget_tools(self) -> list[BaseTool]:
        """Start the sessions when needed and return every server's tools."""
        return await asyncio.wrap_future(self._submit(self._astart))

    def loaded_tools(self) -> list[BaseTool]:
        """Return the tools of the sessions already open (none before the first use)."""
        return list(self._tools or ())

    def close(self) -> None:
        """Stop every server and the background loop; safe to call twice."""
        loop = self._loop
        if loop is None:
            return
        self._submit(self._aclose_sessions).result(timeout=_CLOSE_TIMEOUT_S)
        self._stop_thread()

    async def aclose(self) -> None:
        """Async :meth:`close`."""
        if self._loop is None:
            return
        await asyncio.wrap_future(self._submit(self._aclose_sessions))
        await asyncio.to_thread(self._stop_thread)

    async def __aenter__(self) -> MCPToolProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._thread_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=_run_loop, args=(loop,), name="noema-mcp", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                _close_at_exit(self)
            return self._loop

    def _submit(self, factory: Callable[[], Awaitable[_T]]) -> concurrent.futures.Future[_T]:
        loop = self._ensure_loop()

        async def run() -> _T:
            return await factory()

        return asyncio.run_coroutine_threadsafe(run(), loop)

    def _stop_thread(self) -> None:
        with self._thread_lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
            self._tools = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=_CLOSE_TIMEOUT_S)

    async def _astart(self) -> list[BaseTool]:
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._tools is None:
                self._tools = await self._open_all()
            return list(self._tools)

    async def _open_all(self) -> list[BaseTool]:
        from noema_graph.tools.mcp_session import ServerSession

        sessions = {s.name: ServerSession(s, max_restarts=self.max_restarts) for s in self.servers}
        outcomes = await asyncio.gather(
            *(session.start() for session in sessions.values()), return_exceptions=True
        )
        errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if errors:
            await asyncio.gather(*(session.close() for session in sessions.values()))
            if isinstance(errors[0], ToolError):
                raise errors[0]
            raise ToolError(f"MCP servers failed to start: {errors[0]!r}") from errors[0]
        self.sessions = sessions
        registry = ToolRegistry(spec for s in sessions.values() for spec in self._specs(s))
        timeout = max((s.connect_timeout_s + s.read_timeout_s for s in self.servers), default=60)
        tools = registry.as_langchain_tools(
            timeout_s=timeout + 5, max_observation_chars=self.max_observation_chars
        )
        check_tool_schemas(tools)  # a server's invalid schema is named, not degraded
        return tools

    def _specs(self, session: ServerSession) -> list[ToolSpec]:
        return [
            ToolSpec(
                name=f"{session.server.name}__{_UNSAFE_NAME.sub('_', tool.name)}",
                description=tool.description,
                input_schema=_schema_of(tool),
                handler=self._handler(session, tool.name),
                idempotency=_idempotency(tool.metadata),
            )
            for tool in session.tools.values()
        ]

    def _handler(
        self, session: ServerSession, tool_name: str
    ) -> Callable[..., Awaitable[ToolResult]]:
        async def call(**arguments: object) -> ToolResult:
            meta = propagation_meta()  # here, in the caller's context, before the loop hop
            return await self._dispatch(lambda: session.call(tool_name, arguments, meta=meta))

        return call

    async def _dispatch(self, factory: Callable[[], Awaitable[ToolResult]]) -> ToolResult:
        loop = self._loop
        if loop is None:
            return ToolResult.fail(
                "mcp_closed", "the MCP tool provider is closed", recoverable=False
            )
        if asyncio.get_running_loop() is loop:
            return await factory()
        return await asyncio.wrap_future(self._submit(factory))

    async def _aclose_sessions(self) -> None:
        sessions, self.sessions = self.sessions, {}
        await asyncio.gather(*(session.close() for session in sessions.values()))


def _schema_of(tool: BaseTool) -> dict[str, object]:
    schema = tool.args_schema
    if isinstance(schema, dict):
        return schema
    return tool.tool_call_schema.model_json_schema()  # pyright: ignore[reportAttributeAccessIssue] -- pydantic schema


def _close_at_exit(provider: MCPToolProvider) -> None:
    """Close ``provider``'s servers when the process exits, unless it is closed (or gone) first."""
    ref = weakref.ref(provider)

    def close() -> None:
        alive = ref()
        if alive is not None:
            alive.close()

    atexit.register(close)


def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


@asynccontextmanager
async def mcp_tools(
    servers: Sequence[MCPServer | Mapping[str, object]],
) -> AsyncGenerator[list[BaseTool]]:
    """Open one session per server for the ``async with`` block and yield their tools.

    The tools work from ``invoke`` and ``ainvoke``; every server stops when the block exits.
    """
    provider = MCPToolProvider(servers)
    try:
        yield await provider.aget_tools()
    finally:
        await provider.aclose()
