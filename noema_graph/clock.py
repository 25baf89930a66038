"""The time noema_graph reads: durations, timestamps and memory expiry, from one source.

Node timings (and so the ``timeout_s`` budget), trace timestamps and memory TTLs read the time
through :func:`monotonic`, :func:`now` and :func:`utc_now`. A test installs a
:class:`ManualClock` with :func:`use_clock` and moves time forward instead of sleeping::

    with use_clock(ManualClock()) as clock:
        manager.store("k", "v", ttl_s=60)
        clock.advance(61)
        assert manager.recall("v") == []

Real waiting (a tool call's deadline, polling the abort switch) keeps using the real clock:
a fake clock must never make the process wait less or more than it says.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Protocol, TypeVar

from noema_graph.errors import ConfigurationError


class TimeSource(Protocol):
    """Where the time comes from: a monotonic counter and the UTC wall clock."""

    def monotonic(self) -> float:
        """Return seconds of a counter that never goes back (durations only)."""
        ...

    def now(self) -> datetime:
        """Return the current time, timezone-aware UTC."""
        ...


class SystemClock:
    """The real time: ``time.perf_counter`` and ``datetime.now(UTC)``."""

    def monotonic(self) -> float:
        """Return ``time.perf_counter()``."""
        return time.perf_counter()

    def now(self) -> datetime:
        """Return ``datetime.now(UTC)``."""
        return datetime.now(UTC)


EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
"""Where a :class:`ManualClock` starts unless told otherwise."""


class ManualClock:
    """A clock that moves only when told to (:meth:`advance`); for tests."""

    def __init__(self, start: datetime = EPOCH) -> None:
        """Start at ``start`` (timezone-aware), with the monotonic counter at 0."""
        if start.tzinfo is None:
            raise ConfigurationError(
                "start", f"{start!r} has no timezone", fix="pass an aware datetime (UTC)"
            )
        self._start = start
        self._elapsed = 0.0
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        """Return the seconds advanced so far."""
        return self._elapsed

    def now(self) -> datetime:
        """Return the start time plus the seconds advanced so far."""
        return self._start + timedelta(seconds=self._elapsed)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (>= 0); safe to call from any thread."""
        if seconds < 0:
            raise ConfigurationError("seconds", f"{seconds!r}: time only moves forward")
        with self._lock:
            self._elapsed += seconds


_SOURCE: list[TimeSource] = [SystemClock()]
"""The process's time source (one cell, swapped by :func:`use_clock`)."""

C = TypeVar("C", bound=TimeSource)


@contextmanager
def use_clock(clock: C) -> Generator[C]:
    """Make ``clock`` the process's time source inside the block; restore the previous one.

    Process-wide on purpose: nodes run on LangGraph's worker threads and tool calls on ours,
    and all of them must see the same time.
    """
    previous, _SOURCE[0] = _SOURCE[0], clock
    try:
        yield clock
    finally:
        _SOURCE[0] = previous


def monotonic() -> float:
    """Return the current time source's monotonic seconds (for durations)."""
    return _SOURCE[0].monotonic()


def now() -> datetime:
    """Return the current time source's time, timezone-aware UTC."""
    return _SOURCE[0].now()


def utc_now() -> str:
    """Return the current time source's time as ISO 8601 UTC text."""
    return _SOURCE[0].now().isoformat()
