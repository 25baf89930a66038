"""The effect drivers: results and errors reach the step at its yield, on both paths."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from noema_graph.context import RunContext
from noema_graph.effects import Steps, bounded, gather, io
from noema_graph.errors import Cancelled
from tests.nodes.helpers import Path, run

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event that blocked calls wait on; set at teardown so no worker stays blocked."""
    event = threading.Event()
    yield event
    event.set()


def value(result: Any) -> Any:
    """Return an effect whose blocking and awaited forms both give ``result``."""

    async def awaited() -> Any:
        return result

    return io(lambda: result, awaited)


def failing(exc: Exception) -> Any:
    """Return an effect that raises ``exc`` on both paths."""

    def blocking() -> Any:
        raise exc

    async def awaited() -> Any:
        raise exc

    return io(blocking, awaited)


def test_results_are_sent_and_errors_thrown_into_the_step(path: Path) -> None:
    def steps() -> Steps[tuple[Any, ...]]:
        first = yield value(1)
        try:
            yield failing(KeyError("missing"))
        except KeyError as exc:
            caught = str(exc)
        else:
            caught = "nothing"
        last = yield value(first + 1)
        return first, caught, last

    assert run(steps(), path) == (1, "'missing'", 2)


def test_an_error_the_step_does_not_catch_propagates(path: Path) -> None:
    def steps() -> Steps[None]:
        yield failing(LookupError("gone"))

    with pytest.raises(LookupError, match="gone"):
        run(steps(), path)


def test_a_step_without_effects_returns_its_value(path: Path) -> None:
    def steps() -> Steps[str]:
        return "done"
        yield  # a generator nonetheless

    assert run(steps(), path) == "done"


def _blocked(release: threading.Event) -> Any:
    async def forever() -> str:
        await asyncio.Event().wait()
        return "never"

    return lambda: release.wait(30) and "late", forever


def test_bounded_raises_timeout_error(path: Path, release: threading.Event) -> None:
    blocking, awaited = _blocked(release)

    def steps() -> Steps[str]:
        try:
            yield bounded(blocking, awaited, RunContext(), timeout=0.05)
        except TimeoutError:
            return "timed out"
        return "finished"

    assert run(steps(), path) == "timed out"


def test_bounded_raises_cancelled_once_the_run_is_aborted(
    path: Path, release: threading.Event
) -> None:
    abort = threading.Event()
    abort.set()
    blocking, awaited = _blocked(release)

    def steps() -> Steps[Any]:
        return (yield bounded(blocking, awaited, RunContext(abort=abort)))

    with pytest.raises(Cancelled, match="cancelled while this call was in progress"):
        run(steps(), path)


def test_bounded_returns_the_result_in_time_with_the_callers_context(path: Path) -> None:
    async def awaited() -> str:
        return WHO.get()

    def steps() -> Steps[str]:
        return (yield bounded(WHO.get, awaited, RunContext(abort=threading.Event()), timeout=5))

    token = WHO.set("caller")
    try:
        assert run(steps(), path) == "caller"  # a worker thread sees the caller's variables
    finally:
        WHO.reset(token)


def _waiter(path: Path, name: str, go: Any, sets: Any = None) -> Steps[str]:
    """A step that waits for ``go`` (and then sets ``sets``); it ends only if run concurrently."""
    if path == "sync":

        def blocking() -> str:
            assert go.wait(5), f"{name} waited in vain: the steps did not run concurrently"
            if sets is not None:
                sets.set()
            return name

        result = yield io(blocking, _never)
    else:

        async def awaited() -> str:
            await asyncio.wait_for(go.wait(), 5)
            if sets is not None:
                sets.set()
            return name

        result = yield io(_never_sync, awaited)
    return result


async def _never() -> str:
    raise AssertionError("the blocking driver awaited an effect")


def _never_sync() -> str:
    raise AssertionError("the async driver ran an effect blocking")


def _starter(name: str, sets: Any) -> Steps[str]:
    sets.set()
    return (yield value(name))


def test_gather_runs_concurrently_and_keeps_the_order(path: Path) -> None:
    def steps() -> Steps[list[str]]:
        make = threading.Event if path == "sync" else asyncio.Event
        first, second = make(), make()
        # "a" can finish only after "c" ran, and "b" only after "a": reverse completion order
        return (
            yield gather(
                [
                    _waiter(path, "a", first, sets=second),
                    _waiter(path, "b", second),
                    _starter("c", first),
                ]
            )
        )

    assert run(steps(), path) == ["a", "b", "c"]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_gather_raises_the_first_error_after_every_step_ended(path: Path) -> None:
    ended: list[str] = []

    async def later() -> None:
        await asyncio.sleep(0.05)

    def ok() -> Steps[None]:
        yield io(lambda: time.sleep(0.05), later)  # still running when "bad" fails
        ended.append("ok")

    def bad() -> Steps[None]:
        yield failing(ValueError("bad step"))

    def steps() -> Steps[Any]:
        return (yield gather([bad(), ok()]))

    with pytest.raises(ValueError, match="bad step"):
        run(steps(), path)
    assert ended == ["ok"]
