"""Build the built-in toolkits an :class:`AgentConfig` enables."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from langchain_core.tools import BaseTool

from noema_graph.config import AgentConfig
from noema_graph.tools.bash import bash_tools
from noema_graph.tools.file_edit import file_edit_tools
from noema_graph.tools.python_executor import python_executor_tools
from noema_graph.tools.registry import ToolRegistry
from noema_graph.tools.results import DEFAULT_MAX_OBSERVATION_CHARS
from noema_graph.tools.search import SearchProvider, SqliteSearchProvider, search_tools

SEARCH_DB_RELATIVE_PATH = Path(".noema") / "search.sqlite"
"""Where the default search index lives, under the working directory."""


def working_directory_for(config: AgentConfig) -> Path:
    """Return the sandbox root: ``config.working_directory``, else ``Path.cwd()`` (resolved)."""
    return (config.working_directory or Path.cwd()).resolve()


def default_search_provider(config: AgentConfig) -> SqliteSearchProvider:
    """Return the SQLite index under the working directory, or in memory without one."""
    if config.working_directory is None:
        return SqliteSearchProvider(":memory:")
    return SqliteSearchProvider(working_directory_for(config) / SEARCH_DB_RELATIVE_PATH)


def builtin_registry(
    config: AgentConfig,
    *,
    search_provider: SearchProvider | None = None,
    allow_unsandboxed: bool = False,
    read_paths: Sequence[str] = (),
) -> ToolRegistry:
    """Return a registry holding the toolkits ``config.enabled_toolkits`` names.

    ``bash`` and ``python_executor`` run in a bubblewrap sandbox; where it cannot start they
    answer ``sandbox_unavailable`` (naming the fix) unless ``allow_unsandboxed=True``. The
    sandbox shows the working directory, the system directories and the Python environment;
    ``read_paths`` shows more, read-only (each must exist: ``ConfigurationError``).
    """
    registry = ToolRegistry()
    for toolkit in config.enabled_toolkits:
        if toolkit == "file_edit":
            registry.register_many(file_edit_tools())
        elif toolkit == "bash":
            registry.register_many(
                bash_tools(allow_unsandboxed=allow_unsandboxed, read_paths=read_paths)
            )
        elif toolkit == "python_executor":
            registry.register_many(
                python_executor_tools(allow_unsandboxed=allow_unsandboxed, read_paths=read_paths)
            )
        else:
            registry.register_many(search_tools(search_provider or default_search_provider(config)))
    return registry


def toolkits_for(
    config: AgentConfig,
    *,
    search_provider: SearchProvider | None = None,
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
    allow_unsandboxed: bool = False,
    read_paths: Sequence[str] = (),
) -> list[BaseTool]:
    """Return the enabled built-in tools as LangChain tools bound to ``config``'s limits.

    File, shell and code tools are confined to ``config.working_directory``, or to
    ``Path.cwd()`` at this call when it is None (never a silent temporary directory).
    Permissions and the per-call timeout come from ``config.permissions`` and
    ``config.tool_timeout_s``. ``bash`` and ``python_executor`` refuse to run outside their
    sandbox (error ``sandbox_unavailable``) unless ``allow_unsandboxed=True``; they read
    only the working directory, the system directories, the Python environment and
    ``read_paths`` (read-only).
    """
    registry = builtin_registry(
        config,
        search_provider=search_provider,
        allow_unsandboxed=allow_unsandboxed,
        read_paths=read_paths,
    )
    return registry.as_langchain_tools(
        permissions=config.permissions,
        working_directory=working_directory_for(config),
        timeout_s=config.tool_timeout_s,
        max_observation_chars=max_observation_chars,
    )
