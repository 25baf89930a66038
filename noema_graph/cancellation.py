"""Cancel a run so that it still ends in ``finalize`` with ``error.code = "cancelled"``.

Two ways: set ``RunContext.abort`` (a ``threading.Event``) from anywhere, or run the graph
with :func:`ainvoke_cancellable` and cancel the asyncio task that awaits it. In-flight async
model and tool calls are interrupted within ~50 ms; the run then finalizes with the partial
result instead of raising ``CancelledError``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel

from noema_graph.context import RunContext


async def ainvoke_cancellable(
    graph: Pregel[Any, Any, Any, Any],
    inputs: object,
    config: RunnableConfig | None = None,
    *,
    context: RunContext | None = None,
) -> dict[str, object]:
    """Run ``graph.ainvoke``; if the calling task is cancelled, finalize instead of raising.

    Returns the final state either way; a cancelled run has ``output.error.code ==
    "cancelled"`` and its checkpoints end in ``finalize`` like any other run.
    """
    base = context or RunContext()
    abort = base.abort or threading.Event()
    run = asyncio.ensure_future(graph.ainvoke(inputs, config, context=replace(base, abort=abort)))
    try:
        return await asyncio.shield(run)
    except asyncio.CancelledError:
        if run.done():
            raise
        abort.set()
        return await run
