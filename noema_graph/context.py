"""Run-scoped context passed to every node through LangGraph's ``context_schema``.

Pass it as ``graph.invoke(inputs, config, context=RunContext(...))``; every field is optional
and a run without context behaves as if ``RunContext()`` had been given.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from uuid import uuid4

from noema_graph.errors import ConfigurationError


def user_text(value: object, field: str) -> str:
    """Return the learner ``value`` names (a name, or an id) as text.

    Raises:
        ConfigurationError: ``value`` is neither text nor an integer id; names ``field``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ConfigurationError(
        field,
        f"expected the learner's name or id, got {type(value).__name__} {value!r}",
        fix="pass the learner's name (text) or id (integer), e.g. user_id='ada'",
    )


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
    metadata: dict[str, object] = field(default_factory=dict[str, object])
    dry_run: bool = False
    """Write tools validate and report what they would change; nothing is written (the
    change journal keeps the would-be changes, marked ``dry_run``)."""
    deadline: float | None = None
    """``time.monotonic()`` instant at which the run's time budget runs out during the node
    in progress; set by the graph around each node (leave it unset), read by every bounded
    model and tool call so that ``timeout_s`` stops a call in flight."""

    def __post_init__(self) -> None:
        # LangGraph builds the context from a client's JSON (``"context": {"user_id": 2}``):
        # an id arrives as a number; anything else names nobody and is refused here.
        object.__setattr__(self, "user_id", user_text(self.user_id, "RunContext.user_id"))

    def aborted(self) -> bool:
        """Return True once the caller has set the abort event."""
        return self.abort is not None and self.abort.is_set()


DEFAULT_CONTEXT = RunContext()

AUTH_USER = "langgraph_auth_user"
"""``configurable`` key of the LangGraph server's authenticated user (None: unauthenticated)."""
AUTH_USER_ID = "langgraph_auth_user_id"
"""``configurable`` key of that user's identity."""


def context_of(value: object) -> RunContext:
    """Return ``value`` if it is a RunContext, else the default context."""
    return value if isinstance(value, RunContext) else DEFAULT_CONTEXT


def run_user(context: RunContext, configurable: Mapping[str, object] | None = None) -> str | None:
    """Return the learner the run names, or None when it names nobody.

    The learner comes from the run only, never from the request's text: the LangGraph
    server's authenticated user (``configurable["langgraph_auth_user_id"]``, set by its auth
    handler, Aegra's too), else ``context.user_id`` (the CLI's ``--user``, the facade's
    ``user_id=``, ``RunContext(user_id=...)``), else ``configurable["user_id"]``.
    ``RunContext``'s default user (``"anonymous"``) and an empty value name nobody.

    Raises:
        ConfigurationError: ``configurable["user_id"]`` is neither text nor an integer, or the
            run names another learner than its authenticated user.
    """
    settings = configurable or {}
    claimed: str | None = None
    if context.user_id and context.user_id != DEFAULT_CONTEXT.user_id:
        claimed = context.user_id
    elif (raw := settings.get("user_id")) is not None:
        user = user_text(raw, "configurable.user_id")
        claimed = None if user in ("", DEFAULT_CONTEXT.user_id) else user
    authenticated = settings.get(AUTH_USER_ID) if settings.get(AUTH_USER) is not None else None
    if not authenticated:
        return claimed
    if claimed is not None and claimed != str(authenticated):
        raise ConfigurationError(
            "user_id",
            f"the run names learner {claimed!r} but its authenticated user is "
            f"{str(authenticated)!r}",
            fix="leave user_id out: an authenticated run is its own user's",
        )
    return str(authenticated)


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
