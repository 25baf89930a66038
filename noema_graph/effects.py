"""Sans-I/O node steps: a node's logic is written once and driven sync or async.

A node body is a generator: it ``yield``s an :class:`Effect` wherever it needs I/O (a model
call, a tool call, a Store read) and receives the effect's result back; it ``return``s its
state update. :func:`drive` runs the effects blocking (``graph.invoke``), :func:`adrive`
awaits them (``graph.ainvoke``). Exceptions raised by an effect are thrown into the
generator at its ``yield``, so a node handles I/O errors with an ordinary ``try`` around it.

Example::

    def node(state, runtime, deps) -> Steps[dict[str, Any]]:
        reply = yield model_call(deps.model, prompt, ctx(runtime))
        return {"messages": [reply]}
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, ParamSpec, TypeVar, cast

from noema_graph.context import RunContext
from noema_graph.errors import Cancelled, NoemaError, RunTimeout

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")

Steps = Generator["Effect[Any]", Any, R]
"""A node body: yields effects, receives their results, returns its value."""

ABORT_POLL_S = 0.05
"""How often a blocking call checks the run's abort switch."""


class Deadline(NoemaError, TimeoutError):
    """The deadline of a :func:`bounded` effect passed before the work ended.

    A control-flow signal: the tool node catches it and records the call as timed out.
    """


@dataclass(frozen=True, slots=True)
class Effect(Generic[T]):
    """One piece of I/O: how to do it blocking (``run``) and how to await it (``arun``)."""

    run: Callable[[], T]
    arun: Callable[[], Awaitable[T]]


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What the last effect gave: a value, or the exception it raised."""

    value: Any = None
    error: BaseException | None = None

    def feed(self, steps: Steps[R]) -> Effect[Any] | _Finished[R]:
        """Send the outcome into ``steps``; return its next effect, or its return value."""
        try:
            return steps.send(self.value) if self.error is None else steps.throw(self.error)
        except StopIteration as stop:
            return _Finished(stop.value)


@dataclass(frozen=True, slots=True)
class _Finished(Generic[R]):
    value: R


def drive(steps: Steps[R]) -> R:
    """Run ``steps`` to completion, performing each effect blocking."""
    outcome = _Outcome()
    while not isinstance(effect := outcome.feed(steps), _Finished):
        try:
            outcome = _Outcome(effect.run())
        except BaseException as exc:  # handed to the node at its yield, which decides
            outcome = _Outcome(error=exc)
    return effect.value


async def adrive(steps: Steps[R]) -> R:
    """Async twin of :func:`drive`: each effect is awaited."""
    outcome = _Outcome()
    while not isinstance(effect := outcome.feed(steps), _Finished):
        try:
            outcome = _Outcome(await effect.arun())
        except BaseException as exc:  # handed to the node at its yield, which decides
            outcome = _Outcome(error=exc)
    return effect.value


def blocking(steps: Callable[P, Steps[R]]) -> Callable[P, R]:
    """Return the blocking form of a steps function (same parameters, run by :func:`drive`).

    With :func:`awaiting`, a class writes a method's logic once as a generator and exposes
    both forms: ``recall = blocking(_recall)`` and ``arecall = awaiting(_recall)``.
    """

    @functools.wraps(steps)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return drive(steps(*args, **kwargs))

    return run


def awaiting(steps: Callable[P, Steps[R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """Return the async form of a steps function (same parameters, run by :func:`adrive`)."""

    @functools.wraps(steps)
    async def arun(*args: P.args, **kwargs: P.kwargs) -> R:
        return await adrive(steps(*args, **kwargs))

    return arun


def bounded(
    run: Callable[[], T],
    arun: Callable[[], Awaitable[T]],
    context: RunContext,
    *,
    timeout: float | None = None,
) -> Effect[T]:
    """Return an effect that stops waiting on a deadline or when the run is aborted.

    Raises :class:`Deadline` after ``timeout`` seconds, :class:`RunTimeout` when the run's
    time budget (``context.deadline``) runs out first, and :class:`Cancelled` once the abort
    switch is set, on both paths (a ``TimeoutError`` the work raises itself passes through).
    A blocking call runs in a worker thread (with the caller's context variables) only when
    there is something to wait for; the abandoned call finishes in the background.
    """
    watched = context.abort is not None

    def limit() -> tuple[float | None, bool]:
        """Return (seconds to wait at most, whether the run's budget is what limits it)."""
        if context.deadline is None:
            return timeout, False
        budget = context.deadline - time.monotonic()
        if budget <= 0:
            raise RunTimeout("the run's time budget ran out before this call")
        return (budget, True) if timeout is None or budget < timeout else (timeout, False)

    def blocking() -> T:
        wait, budget = limit()
        if wait is None and not watched:
            return run()
        try:
            return _wait_thread(run, context, wait)
        except Deadline as exc:
            raise _expired(budget, wait) from exc

    async def awaiting() -> T:
        wait, budget = limit()
        scope = asyncio.timeout(wait)
        try:
            async with scope:
                return await _race_abort(arun(), context) if watched else await arun()
        except TimeoutError as exc:
            if scope.expired():
                raise _expired(budget, wait) from exc
            raise

    return Effect(blocking, awaiting)


def _expired(budget: bool, wait: float | None) -> Exception:
    if budget:
        return RunTimeout("the run's time budget ran out during this call")
    return Deadline(f"no result after {wait}s")


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="noema-call")


def _wait_thread(run: Callable[[], T], context: RunContext, timeout: float | None) -> T:
    future = _POOL.submit(contextvars.copy_context().run, run)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        wait = left if context.abort is None else min(ABORT_POLL_S, left or ABORT_POLL_S)
        try:
            return future.result(timeout=wait)
        except TimeoutError:
            if future.done():
                raise  # the work's own TimeoutError, not our wait running out
        if context.aborted():
            future.cancel()
            raise Cancelled("the run was cancelled while this call was in progress")
        if deadline is not None and time.monotonic() >= deadline:
            future.cancel()
            raise Deadline(f"no result after {timeout}s")


async def _aborted(context: RunContext) -> None:
    # The abort switch is a threading.Event so sync runs can use it too: poll it.
    while not context.aborted():  # noqa: ASYNC110
        await asyncio.sleep(ABORT_POLL_S)


async def _race_abort(work: Awaitable[T], context: RunContext) -> T:
    """Await ``work``; if the abort event is set first, cancel it and raise Cancelled."""
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


def gather(steps: Sequence[Steps[T]]) -> Effect[list[T]]:
    """Return an effect that runs several step generators concurrently; results in order.

    Blocking: each on a worker thread with the caller's context variables. Awaited: as
    tasks of one ``asyncio.gather``. The first exception is raised once all have ended.
    """

    def run() -> list[T]:
        futures = [_POOL.submit(contextvars.copy_context().run, drive, s) for s in steps]
        concurrent.futures.wait(futures)
        return [f.result() for f in futures]

    async def arun() -> list[T]:
        results = await asyncio.gather(*(adrive(s) for s in steps), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return cast(list[T], list(results))  # no exception left: all are T

    return Effect(run, arun)


def io(run: Callable[[], T], arun: Callable[[], Awaitable[T]]) -> Effect[T]:
    """Return a plain effect (a Store read or write, a tool listing)."""
    return Effect(run, arun)
