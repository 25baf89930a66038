"""A durable ledger of non-idempotent tool calls, so a crash never repeats one silently.

Before a ``non_idempotent`` tool runs, its call id is written to the Store (committed at
once, unlike the node's own writes, which land in the checkpoint only when the task ends).
If the task runs again after a crash, the ledger already holds the call: the tool is not
run a second time and the model gets an observation saying so. A tool that pauses the run
itself (``interrupt()``) is recorded as paused and runs again on resume, as LangGraph re-runs
an interrupted task. Without a Store there is no ledger, and the checkpoint's per-call tasks
are the only protection.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any, Literal

from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore

from noema_graph.effects import Steps, io

logger = logging.getLogger(__name__)

LEDGER_NAMESPACE = ("noema", "tool_ledger")
STORE_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, OSError)
LedgerStatus = Literal["started", "done", "paused"]
"""A call's ledger entry: running (or crashed), finished, or paused by its own interrupt()."""


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


def claim(store: BaseStore, thread: str, call: dict[str, Any]) -> Steps[str | None]:
    """Record ``call`` as started; return a refusal if it was recorded before.

    A call recorded as ``paused`` (the tool itself called ``interrupt()``) runs again: LangGraph
    re-runs an interrupted task from its start when the caller resumes.
    """
    namespace, key = (*LEDGER_NAMESPACE, thread), str(call["id"])
    entry = {"status": "started", "tool": call["name"]}
    try:
        previous = yield io(lambda: store.get(namespace, key), lambda: store.aget(namespace, key))
        if previous is not None and (refusal := _refusal(previous.value)) is not None:
            return refusal
        yield io(
            lambda: store.put(namespace, key, entry), lambda: store.aput(namespace, key, entry)
        )
    except STORE_ERRORS as exc:
        logger.warning("tool ledger unavailable (%r); running %s unguarded", exc, call["name"])
    return None


def settle(
    store: BaseStore, thread: str, call: dict[str, Any], status: LedgerStatus = "done"
) -> Steps[None]:
    """Record ``call`` as ``done`` (or ``paused``: it called ``interrupt()``)."""
    namespace, key = (*LEDGER_NAMESPACE, thread), str(call["id"])
    entry = {"status": status, "tool": call["name"]}
    try:
        yield io(
            lambda: store.put(namespace, key, entry), lambda: store.aput(namespace, key, entry)
        )
    except STORE_ERRORS as exc:
        logger.warning("tool ledger unavailable (%r) after %s", exc, call["name"])
