"""Run-scoped context passed to every node through LangGraph's ``context_schema``.

Pass it as ``graph.invoke(inputs, config, context=RunContext(...))``; every field is optional
and a run without context behaves as if ``RunContext()`` had been given.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4


@dataclass(frozen=True)
class RunContext:
    """Who runs, under which ids, with which budget overrides and abort switch."""

    user_id: str = "anonymous"
    session_id: str | None = None
    correlation_id: str = field(default_factory=lambda: uuid4().hex)
    trace_id: str | None = None
    abort: threading.Event | None = None
    depth: int = 0
    max_cost_usd: float | None = None
    timeout_s: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    dry_run: bool = False
    """Write tools validate and report what they would change; nothing is written (the
    change journal keeps the would-be changes, marked ``dry_run``)."""
    deadline: float | None = None
    """``time.monotonic()`` instant at which the run's time budget runs out during the node
    in progress; set by the graph around each node (leave it unset), read by every bounded
    model and tool call so that ``timeout_s`` stops a call in flight."""

    def aborted(self) -> bool:
        """Return True once the caller has set the abort event."""
        return self.abort is not None and self.abort.is_set()


DEFAULT_CONTEXT = RunContext()


def context_of(value: object) -> RunContext:
    """Return ``value`` if it is a RunContext, else the default context."""
    return value if isinstance(value, RunContext) else DEFAULT_CONTEXT


@dataclass(frozen=True)
class RunScope:
    """The run a tool call belongs to: set around every tool call by ``tool_node``.

    Tools that start runs of their own (subagents) read it with :func:`current_scope` to
    propagate the trace id and the nesting depth.
    """

    trace_id: str
    run_id: str
    context: RunContext
    thread_id: str | None = None
    call_id: str | None = None
    step: int | None = None
    checkpoint_id: str | None = None
    dry_run: bool = False
    """This one call runs dry (see :func:`dry_run_active`), whatever the run's context says."""


_SCOPE: ContextVar[RunScope | None] = ContextVar("noema_run_scope", default=None)
_DRY_RUN: ContextVar[bool] = ContextVar("noema_dry_run", default=False)


def current_scope() -> RunScope | None:
    """Return the scope of the tool call in progress, or None outside one."""
    return _SCOPE.get()


@contextmanager
def run_scope(scope: RunScope) -> Generator[RunScope]:
    """Make ``scope`` current for the duration of a tool call."""
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


@contextmanager
def dry_run_calls() -> Generator[None]:
    """Run the tool calls made inside the block dry: they report, they do not write.

    The per-call switch (a run-wide one is :attr:`RunContext.dry_run`): a node or hook that
    wants one call answered read-only wraps it, e.g. ``with dry_run_calls(): tool.invoke(
    call)``; the domain tools then validate, journal the would-be changes and return them.
    """
    token = _DRY_RUN.set(True)
    try:
        yield
    finally:
        _DRY_RUN.reset(token)


def dry_run_active() -> bool:
    """Return whether the tool call in progress must run dry (block, call or run switch)."""
    scope = _SCOPE.get()
    return _DRY_RUN.get() or (scope is not None and (scope.dry_run or scope.context.dry_run))
