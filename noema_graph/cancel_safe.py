"""Checkpoint writes that a cancelled run cannot leave half done (and the file locked).

An async SQLite checkpointer writes in two awaits: ``execute`` (which opens a write
transaction on its aiosqlite connection) and ``commit``. When the run awaiting it is cancelled
in between (``asyncio.wait_for`` on ``ainvoke``, a ``TaskGroup`` whose other run raised, a
server dropping a request) the commit never comes: the connection keeps the transaction, and
so the file's write lock, until its next commit. Every other connection to the file (the
Store, the event log, other processes) then waits out its busy timeout and fails with
"database is locked"; a blocking connection used on the event loop never sees the lock freed.

:func:`uncancelled` runs a write to its end even when its caller is cancelled, then passes the
cancellation on; :class:`CancelSafeWrites` applies it to a saver's write methods.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar, cast

from langchain_core.runnables import RunnableConfig

T = TypeVar("T")


async def uncancelled(work: Awaitable[T]) -> T:
    """Await ``work`` to its end even if the caller is cancelled meanwhile.

    A cancellation that arrives during the work is re-raised once the work has finished, so
    the caller still stops, but never between a write and its commit. An exception of the
    work itself propagates as usual.
    """
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            if task.done():  # the work itself was cancelled: nothing left to wait for
                raise
            cancelled = exc  # the caller was cancelled: let the write finish first
            continue
        if cancelled is not None:
            raise cancelled
        return result


class CancelSafeWrites:
    """Mixin for an async checkpointer whose writes always reach their commit.

    ``aput``, ``aput_writes`` and ``adelete_thread`` run to their end even when the run that
    awaits them is cancelled; the cancellation is passed on afterwards. Put it first in the
    bases: ``class Saver(CancelSafeWrites, AsyncSqliteSaver)``.
    """

    async def aput(
        self, config: RunnableConfig, checkpoint: Any, metadata: Any, new_versions: Any
    ) -> RunnableConfig:
        """Save a checkpoint; a cancellation waits for the commit."""
        put = super().aput(config, checkpoint, metadata, new_versions)  # type: ignore[misc]  # a mixin: the saver's method
        return await uncancelled(cast(Awaitable[RunnableConfig], put))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes; a cancellation waits for the commit."""
        put = super().aput_writes(config, writes, task_id, task_path)  # type: ignore[misc]  # a mixin: the saver's method
        await uncancelled(cast(Awaitable[None], put))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints; a cancellation waits for the commit."""
        await uncancelled(super().adelete_thread(thread_id))  # type: ignore[misc]  # a mixin: the saver's method
