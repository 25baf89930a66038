"""Run a domain tool call journaled: under its thread, step and call id, or dry.

The domain tools' handler (:mod:`noema_graph.agents.domain_tools`) calls
:func:`journaled_call`. Inside a graph run, ``tool_node`` makes the call's
:class:`~noema_graph.context.RunScope` current; its thread, step, checkpoint and call id go
with every row the call changes into the learning store's change journal
(:mod:`noema_graph.noema.journal`). Outside a run (a script calling the handler) nothing is
journaled, unless the call runs dry.

A dry call (:func:`~noema_graph.context.dry_run_active`: the run's ``RunContext.dry_run``,
the call's ``RunScope.dry_run`` or a ``dry_run_calls()`` block) returns what the operation
would have returned, plus ``dry_run: true`` and ``would_change``: one readable line per row.
A thread whose changes an undo reverted refuses writes (``forbidden``): a resumed step asks
the learner rather than redo them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import uuid4

from pydantic_core import to_jsonable_python

from noema_graph.context import current_scope, dry_run_active
from noema_graph.noema.journal import ChangeContext, ThreadUndone
from noema_graph.noema.store import DryRun, LearningStore
from noema_graph.tools import ToolFailure

DRY_RUN_THREAD = "dry-run"
"""The journal's thread for a dry call made outside any run."""


def change_context(tool: str) -> ChangeContext | None:
    """Return who the tool call in progress writes as, or None when it is not journaled."""
    scope = current_scope()
    dry = dry_run_active()
    if scope is None or scope.thread_id is None:
        if not dry:
            return None
        return ChangeContext(
            thread_id=DRY_RUN_THREAD, call_id=uuid4().hex[:12], tool=tool, dry_run=True
        )
    return ChangeContext(
        thread_id=scope.thread_id,
        call_id=scope.call_id or uuid4().hex[:12],
        tool=tool,
        step=scope.step,
        checkpoint_id=scope.checkpoint_id,
        dry_run=dry,
    )


def dry_result(preview: DryRun, view: Callable[[Any], Any] | None) -> dict[str, Any]:
    """Return a dry call's tool result: the would-be result, ``dry_run`` and the lines."""
    value = to_jsonable_python(
        preview.result if view is None else view(preview.result), fallback=str
    )
    fields = value if isinstance(value, dict) else {"result": value}
    lines = preview.lines() or ["nothing: the call would change no row"]
    return {"dry_run": True, "written": False, "would_change": lines, **fields}


def journaled_call(
    store: LearningStore,
    name: str,
    arguments: dict[str, Any],
    view: Callable[[Any], Any] | None = None,
) -> Any:
    """Run ``name`` on ``store`` as the call in progress; return the tool's result.

    Raises:
        ToolFailure: ``forbidden``: an undo of this thread is in effect.
    """
    change = change_context(name)
    if change is None:
        result = store.call(name, **arguments)
        return result if view is None else view(result)
    try:
        result = store.call_journaled(name, arguments, change)
    except ThreadUndone as exc:
        raise ToolFailure(str(exc), type_="forbidden", details={"field": exc.field}) from None
    if isinstance(result, DryRun):
        return dry_result(result, view)
    return result if view is None else view(result)
