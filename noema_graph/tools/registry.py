"""The tool registry: named :class:`ToolSpec` objects and their LangChain view."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from langchain_core.tools import BaseTool

from noema_graph.config import Permission
from noema_graph.registry import Registry
from noema_graph.tools.langchain_tool import to_langchain_tool
from noema_graph.tools.results import DEFAULT_MAX_OBSERVATION_CHARS
from noema_graph.tools.runner import RetryPolicy, ToolRunner
from noema_graph.tools.spec import ToolContext, ToolSpec


class ToolRegistry(Registry[ToolSpec]):
    """Holds tools by unique name, in registration order."""

    noun = "tool"

    def __init__(self, tools: Iterable[ToolSpec] = ()) -> None:
        """Create a registry, optionally pre-filled with ``tools``."""
        super().__init__()
        self.register_many(tools)

    def register(self, spec: ToolSpec) -> ToolSpec:
        """Add ``spec``; a name already taken raises :class:`ConfigurationError`."""
        self._add(spec.name, spec)
        return spec

    def register_many(self, specs: Iterable[ToolSpec]) -> None:
        """Add every spec of ``specs``; stops at the first duplicate name."""
        for spec in specs:
            self.register(spec)

    def get(self, name: str) -> ToolSpec:
        """Return the tool called ``name``; an unknown name raises :class:`ConfigurationError`."""
        return self._item(name)

    def list(self) -> list[ToolSpec]:
        """Return the registered tools in registration order."""
        return list(self._items.values())

    def unregister(self, name: str) -> ToolSpec:
        """Remove and return the tool called ``name``."""
        return self._pop(name)

    def as_langchain_tools(
        self,
        *,
        permissions: Sequence[Permission] = (),
        working_directory: Path | str | None = None,
        timeout_s: float = 60.0,
        max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
        retry: RetryPolicy | None = None,
    ) -> list[BaseTool]:
        """Return every tool as a LangChain ``StructuredTool`` bound to one run's limits.

        Args:
            permissions: Permissions granted; a tool needing another one answers
                "permission denied" instead of running.
            working_directory: Sandbox root for file, shell and code tools; None means
                ``Path.cwd()`` at this call.
            timeout_s: Per-call timeout.
            max_observation_chars: Cap on the observation text the model reads.
            retry: Backoff for safe/idempotent tools on transient errors.

        Returns:
            Tools whose ``invoke``/``ainvoke`` of a tool call give a ``ToolMessage`` with the
            JSON observation as content and the full ``ToolResult`` as artifact.
        """
        root = Path(working_directory) if working_directory is not None else Path.cwd()
        context = ToolContext(
            permissions=frozenset(permissions),
            working_directory=root.resolve(),
            timeout_s=timeout_s,
        )
        runner = ToolRunner(context, retry=retry)
        return [
            to_langchain_tool(spec, runner, max_observation_chars=max_observation_chars)
            for spec in self._items.values()
        ]
