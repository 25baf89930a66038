"""Which tool calls of one model message may run at the same time.

A model that sends several calls in one message means them in that order: ``cd`` then ``cp``,
``mkdir`` then ``mv``. Running them concurrently lets them finish in any order, so only calls
declared safe to run concurrently share a group; every other call runs alone, in message
order.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import TypeVar

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
    metadata: Mapping[str, object] = tool.metadata or {}
    flag = metadata.get(CONCURRENCY_SAFE)
    if flag is not None:
        return flag is True
    return metadata.get("idempotency") == "safe" or metadata.get("readOnlyHint") is True


Call = TypeVar("Call", bound=Mapping[str, object])


def next_group(
    pending: Sequence[tuple[int, Call]], safe: Container[str], cap: int
) -> list[tuple[int, Call]]:
    """Return the calls to run next from ``pending`` (index, call) pairs in message order.

    A call whose tool is not in ``safe`` runs alone; consecutive safe calls run together, at
    most ``cap`` at a time. So ``cd`` then ``cp`` never swap, while five reads overlap.
    """
    if not pending:
        return []
    if str(pending[0][1].get("name")) not in safe:
        return [pending[0]]
    group: list[tuple[int, Call]] = []
    for item in pending:
        if str(item[1].get("name")) not in safe or len(group) == cap:
            break
        group.append(item)
    return group


def execution_groups(
    calls: Sequence[Mapping[str, object]], tools: Mapping[str, BaseTool]
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
    safe = {name for name, tool in tools.items() if concurrency_safe(tool)}
    pending = list(enumerate(calls))
    groups: list[list[int]] = []
    while pending:
        group = next_group(pending, safe, cap=len(pending))
        groups.append([index for index, _ in group])
        pending = pending[len(group) :]
    return groups
