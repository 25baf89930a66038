"""Which tool calls may run at the same time as others.

A call may overlap other calls only when its tool says so: ``metadata["concurrency_safe"]``
set to True, or a read-only (``safe``) idempotency class. Everything else (writes, shell
commands, unknown tools) runs alone, in the order the model wrote the calls.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool


def is_concurrency_safe(tool: BaseTool) -> bool:
    """Return True when calls of ``tool`` may run concurrently with other safe calls."""
    meta = tool.metadata or {}
    flag = meta.get("concurrency_safe")
    if flag is not None:
        return bool(flag)
    return meta.get("idempotency") == "safe"
