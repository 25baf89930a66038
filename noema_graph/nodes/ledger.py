"""A durable ledger of non-idempotent tool calls, so a crash never repeats one silently.

Before a ``non_idempotent`` tool runs, its call id is written to the Store (committed at
once, unlike the node's own writes, which land in the checkpoint only when the task ends).
If the task runs again after a crash, the ledger already holds the call: the tool is not
run a second time and the model gets an observation saying so. A tool that pauses the run
itself (``interrupt()``) is recorded as paused and runs again on resume, as LangGraph re-runs
an interrupted task. Without a Store there is no ledger, and the checkpoint's per-call tasks
are the only protection.

The ledger fails closed: a Store read or write that finds the file busy is retried for
:data:`RETRY_S`; if the claim still cannot be recorded, the call is not run and the model
gets an error observation saying why. A settle that cannot be recorded leaves the call
``started``, so a later resume refuses to repeat it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from noema_graph.backends import store_errors
from noema_graph.effects import Steps, io
from noema_graph.errors import NoemaError
from noema_graph.sqlite_writer import FIRST_DELAY_S, MAX_DELAY_S, RETRY_S, is_busy

logger = logging.getLogger(__name__)
T = TypeVar("T")

LEDGER_NAMESPACE = ("noema", "tool_ledger")
LedgerStatus = Literal["started", "done", "paused"]
"""A call's ledger entry: running (or crashed), finished, or paused by its own interrupt()."""


class LedgerUnavailable(NoemaError):
    """The Store could not read or record a ledger entry (after retries)."""

    def __init__(self, cause: BaseException) -> None:
        """Wrap the Store's error ``cause``."""
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


def needs_ledger(tool: BaseTool, store: BaseStore | None) -> bool:
    """Return True when ``tool`` is non-idempotent and a Store can hold the ledger."""
    return store is not None and (tool.metadata or {}).get("idempotency") == "non_idempotent"


def _refusal(previous: dict[str, Any]) -> str | None:
    """Return why a recorded call may not run again, or None when it may (it paused)."""
    status = previous.get("status")
    if status == "paused":
        return None
    if status == "done":
        return (
            "Not executed again: this non-idempotent call already ran before the run was "
            "interrupted; its effect is in place."
        )
    return (
        "Not executed again: this non-idempotent call was interrupted by a crash and may or "
        "may not have taken effect. Check its effect before calling it again with a new call."
    )


def _store_error(exc: BaseException) -> bool:
    """Return True when ``exc`` comes from the Store's backend (not a bug in the caller)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, store_errors()):
            return True
        seen = seen.__cause__
    return False


def _sleep(seconds: float) -> Steps[None]:
    yield io(lambda: time.sleep(seconds), lambda: asyncio.sleep(seconds))


def _retried(run: Callable[[], T], arun: Callable[[], Awaitable[T]]) -> Steps[T]:
    """Run a Store operation; retry it while the file is busy, for up to :data:`RETRY_S`.

    Raises:
        LedgerUnavailable: the Store failed (busy past the deadline, or another backend error).
    """
    deadline = time.monotonic() + RETRY_S
    delay = FIRST_DELAY_S
    while True:
        try:
            return (yield io(run, arun))
        except (*store_errors(), ValueError) as exc:  # SQLite stores may wrap in ValueError
            if not _store_error(exc):
                raise
            if not is_busy(exc) or time.monotonic() + delay > deadline:
                raise LedgerUnavailable(exc) from exc
        yield from _sleep(delay)
        delay = min(delay * 2, MAX_DELAY_S)


def _put(store: BaseStore, thread: str, call: dict[str, Any], status: LedgerStatus) -> Steps[None]:
    namespace, key = (*LEDGER_NAMESPACE, thread), str(call["id"])
    entry = {"status": status, "tool": call["name"]}
    yield from _retried(
        lambda: store.put(namespace, key, entry), lambda: store.aput(namespace, key, entry)
    )


def claim(store: BaseStore, thread: str, call: dict[str, Any]) -> Steps[str | None]:
    """Record ``call`` as started; return a refusal if it was recorded before or cannot be.

    A call recorded as ``paused`` (the tool itself called ``interrupt()``) runs again: LangGraph
    re-runs an interrupted task from its start when the caller resumes. When the Store cannot
    record the claim, the call is refused (fails closed): running it unrecorded could repeat
    it after a crash.
    """
    namespace, key = (*LEDGER_NAMESPACE, thread), str(call["id"])
    try:
        previous = yield from _retried(
            lambda: store.get(namespace, key), lambda: store.aget(namespace, key)
        )
        if previous is not None and (refusal := _refusal(previous.value)) is not None:
            return refusal
        yield from _put(store, thread, call, "started")
    except LedgerUnavailable as exc:
        logger.warning("tool ledger unavailable (%s); refusing %s", exc, call["name"])
        return (
            f"Not executed: the tool ledger could not record this non-idempotent call ({exc}), "
            "so it was not run (it could otherwise run twice after a crash). Try the call "
            "again later."
        )
    return None


def settle(
    store: BaseStore, thread: str, call: dict[str, Any], status: LedgerStatus = "done"
) -> Steps[None]:
    """Record ``call`` as ``done`` (or ``paused``: it called ``interrupt()``).

    If the Store cannot record it, the entry stays ``started``: a resume after a crash then
    refuses to repeat the call, which is the safe side.
    """
    try:
        yield from _put(store, thread, call, status)
    except LedgerUnavailable as exc:
        logger.warning(
            "tool ledger could not record %s as %s (%s); it stays 'started'",
            call["name"],
            status,
            exc,
        )
