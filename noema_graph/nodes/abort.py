"""Race async work against the run's abort event, so a cancel stops a long call promptly."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from noema_graph.context import RunContext
from noema_graph.errors import Cancelled

T = TypeVar("T")
POLL_S = 0.05


async def _aborted(context: RunContext) -> None:
    # The abort switch is a threading.Event so sync runs can use it too: poll it.
    while not context.aborted():  # noqa: ASYNC110
        await asyncio.sleep(POLL_S)


async def race_abort(work: Awaitable[T], context: RunContext) -> T:
    """Await ``work``; if the abort event is set first, cancel it and raise Cancelled."""
    if context.abort is None:
        return await work
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_aborted(context))
    try:
        done, _ = await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if task in done:
        return task.result()
    task.cancel()
    raise Cancelled("the run was cancelled while this call was in progress")
