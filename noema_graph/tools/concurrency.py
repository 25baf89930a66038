"""Which tool calls of one model message may run at the same time.

A model that sends several calls in one message means them in that order: ``cd`` then ``cp``,
``mkdir`` then ``mv``. Running them concurrently lets them finish in any order, so only calls
declared safe to run concurrently share a group; every other call runs alone, in message
order (issue 13, "Honest tool execution").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool

CONCURRENCY_SAFE = "concurrency_safe"
"""Tool metadata key: True lets calls of the tool run concurrently, False forbids it."""


def concurrency_safe(tool: BaseTool) -> bool:
    """Return whether calls of ``tool`` may run concurrently with other safe calls.

    True when ``tool.metadata`` says ``concurrency_safe=True``, or, without that key, when
    the tool is read-only: ``idempotency == "safe"`` (noema_graph tools, MCP tools loaded by
    :class:`~noema_graph.tools.MCPToolProvider`) or the MCP annotation ``readOnlyHint``
    (tools loaded by ``langchain-mcp-adapters``). An explicit ``concurrency_safe=False``
    wins over both. Everything else is unsafe: unknown means it may have effects.
    """
    metadata: Mapping[str, Any] = tool.metadata or {}
    flag = metadata.get(CONCURRENCY_SAFE)
    if flag is not None:
        return flag is True
    return metadata.get("idempotency") == "safe" or metadata.get("readOnlyHint") is True


def execution_groups(
    calls: Sequence[Mapping[str, Any]], tools: Mapping[str, BaseTool]
) -> list[list[int]]:
    """Split one message's tool calls into groups run one after another.

    Args:
        calls: The message's tool calls (dicts with a ``name``), in message order.
        tools: The available tools by name.

    Returns:
        Lists of call indexes, in message order: consecutive calls of concurrency-safe tools
        form one group whose calls may run concurrently; every other call (an unsafe or
        unknown tool) is a group of its own. Each group must finish before the next starts.
    """
    groups: list[list[int]] = []
    safe_run: list[int] = []
    for index, call in enumerate(calls):
        tool = tools.get(str(call.get("name")))
        if tool is not None and concurrency_safe(tool):
            safe_run.append(index)
            continue
        if safe_run:
            groups.append(safe_run)
            safe_run = []
        groups.append([index])
    if safe_run:
        groups.append(safe_run)
    return groups
