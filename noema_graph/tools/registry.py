"""The tool registry: named :class:`ToolSpec` objects and their LangChain view."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from langchain_core.tools import BaseTool

from noema_graph.config import Permission
from noema_graph.errors import ConfigurationError
from noema_graph.tools.langchain_tool import to_langchain_tool
from noema_graph.tools.results import DEFAULT_MAX_OBSERVATION_CHARS
from noema_graph.tools.runner import RetryPolicy, ToolRunner
from noema_graph.tools.spec import ToolContext, ToolSpec


class ToolRegistry:
    """Holds tools by unique name, in registration order."""

    def __init__(self, tools: Iterable[ToolSpec] = ()) -> None:
        """Create a registry, optionally pre-filled with ``tools``."""
        self._tools: dict[str, ToolSpec] = {}
        self.register_many(tools)

    def register(self, spec: ToolSpec) -> ToolSpec:
        """Add ``spec``; a name already taken raises :class:`ConfigurationError`."""
        if spec.name in self._tools:
            raise ConfigurationError(
                "tools",
                f"a tool named {spec.name!r} is already registered",
                fix="rename one of the tools or unregister the old one first",
            )
        self._tools[spec.name] = spec
        return spec

    def register_many(self, specs: Iterable[ToolSpec]) -> None:
        """Add every spec of ``specs``; stops at the first duplicate name."""
        for spec in specs:
            self.register(spec)

    def get(self, name: str) -> ToolSpec:
        """Return the tool called ``name``; an unknown name raises :class:`ConfigurationError`."""
        try:
            return self._tools[name]
        except KeyError:
            raise ConfigurationError(
                "tools", f"no tool named {name!r}", fix=f"use one of {sorted(self._tools)}"
            ) from None

    def list(self) -> list[ToolSpec]:
        """Return the registered tools in registration order."""
        return list(self._tools.values())

    def unregister(self, name: str) -> ToolSpec:
        """Remove and return the tool called ``name``."""
        spec = self.get(name)
        del self._tools[name]
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

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
            for spec in self._tools.values()
        ]
