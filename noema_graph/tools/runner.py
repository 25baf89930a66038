"""Run one tool call: permission, validation, timeout, retry, normalisation.

Every outcome the model can act on comes back as a :class:`ToolResult`; only bugs (an
exception the handler did not mean to raise) escape, wrapped in :class:`ToolError`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from langchain_core.tools import ToolException

from noema_graph.effects import Deadline, Effect, Steps, adrive, drive
from noema_graph.errors import ToolError
from noema_graph.tools.results import (
    ToolFailure,
    ToolResult,
    TransientToolFailure,
    normalize_output,
)
from noema_graph.tools.spec import ToolContext, ToolSpec
from noema_graph.tools.validation import validate_arguments

_TRANSIENT: tuple[type[BaseException], ...] = (TransientToolFailure, ConnectionError)
_RECOVERABLE: tuple[type[BaseException], ...] = (
    ToolFailure,
    OSError,
    subprocess.SubprocessError,
    ToolException,
)
_RETRYABLE_CLASSES = frozenset({"safe", "idempotent"})

_executor_lock = threading.Lock()
_executor: concurrent.futures.ThreadPoolExecutor | None = None


def _worker_pool() -> concurrent.futures.ThreadPoolExecutor:
    """Return the shared pool that runs sync handlers under a timeout (created lazily)."""
    global _executor  # noqa: PLW0603 -- one lazily created pool per process, not per call
    with _executor_lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=16, thread_name_prefix="noema-tool"
            )
        return _executor


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff for safe and idempotent tools on transient errors.

    Attributes:
        max_attempts: Attempts in all, the first included (1 disables retries).
        initial_delay_s: Delay before the second attempt.
        multiplier: Factor applied to the delay after each attempt.
        max_delay_s: Upper bound of one delay.
    """

    max_attempts: int = 3
    initial_delay_s: float = 0.1
    multiplier: float = 2.0
    max_delay_s: float = 2.0

    def delay(self, attempt: int) -> float:
        """Return the delay after failed attempt number ``attempt`` (1-based)."""
        return min(self.initial_delay_s * self.multiplier ** (attempt - 1), self.max_delay_s)


class ToolRunner:
    """Execute :class:`ToolSpec` calls under one :class:`ToolContext`."""

    def __init__(self, context: ToolContext, *, retry: RetryPolicy | None = None) -> None:
        """Bind the runner to ``context`` and a retry policy."""
        self.context = context
        self.retry = retry or RetryPolicy()

    def run(self, spec: ToolSpec, arguments: object) -> ToolResult:
        """Run ``spec`` synchronously; never raises for recoverable failures."""
        return drive(self._attempts(spec, arguments))

    async def arun(self, spec: ToolSpec, arguments: object) -> ToolResult:
        """Run ``spec`` from async code; never raises for recoverable failures."""
        return await adrive(self._attempts(spec, arguments))

    def _attempts(self, spec: ToolSpec, arguments: object) -> Steps[ToolResult]:
        """Check, call and retry ``spec``, written once for :meth:`run` and :meth:`arun`."""
        prepared = self._prepare(spec, arguments)
        if isinstance(prepared, ToolResult):
            return prepared
        attempt = 1
        while True:
            try:
                return normalize_output((yield self._call(spec, prepared)))
            except Exception as exc:
                result = self._classify(spec, exc, attempt)
            if result is not None:
                return result
            yield _pause(self.retry.delay(attempt))
            attempt += 1

    def timeout_for(self, spec: ToolSpec) -> float:
        """Return the timeout that applies to ``spec`` under this context."""
        if spec.timeout_s is None:
            return self.context.timeout_s
        return min(spec.timeout_s, self.context.timeout_s)

    def _prepare(self, spec: ToolSpec, arguments: object) -> dict[str, object] | ToolResult:
        if spec.permission is not None and spec.permission not in self.context.permissions:
            return ToolResult.fail(
                "permission_denied",
                f"permission denied: {spec.name} needs {spec.permission}",
                details={"tool": spec.name, "permission": spec.permission},
                recoverable=False,
            )
        try:
            kwargs = validate_arguments(spec, arguments)
        except ToolFailure as failure:
            return failure.to_result()
        if spec.wants_context:
            kwargs["context"] = self.context
        return kwargs

    def _classify(self, spec: ToolSpec, exc: Exception, attempt: int) -> ToolResult | None:
        """Return the result for ``exc``, None to retry, or raise it when it is a bug."""
        if isinstance(exc, TimeoutError):
            return ToolResult.fail(
                "timeout",
                f"timeout: {spec.name} did not finish within {self.timeout_for(spec):g}s",
                details={"timeout_s": self.timeout_for(spec)},
            )
        retryable = spec.idempotency in _RETRYABLE_CLASSES and isinstance(exc, _TRANSIENT)
        if retryable and attempt < self.retry.max_attempts:
            return None
        if isinstance(exc, ToolFailure):
            result = exc.to_result()
        elif isinstance(exc, _RECOVERABLE):
            result = ToolResult.fail(
                type(exc).__name__, f"{spec.name} failed: {exc}", details={"tool": spec.name}
            )
        else:
            msg = f"tool {spec.name!r} raised {type(exc).__name__}: {exc}"
            raise ToolError(msg) from exc
        if attempt > 1 and result.error is not None:
            details = {**result.error.details, "attempts": attempt}
            result = ToolResult.fail(
                result.error.type,
                result.error.message,
                details=details,
                recoverable=result.error.recoverable,
            )
        return result

    def _call(self, spec: ToolSpec, kwargs: dict[str, object]) -> Effect[object]:
        return Effect(
            functools.partial(self._call_blocking, spec, kwargs),
            functools.partial(self._call_async, spec, kwargs),
        )

    def _call_blocking(self, spec: ToolSpec, kwargs: dict[str, object]) -> object:
        timeout = self.timeout_for(spec)
        if spec.is_async:
            factory = cast(
                Callable[[], Awaitable[object]], functools.partial(spec.handler, **kwargs)
            )
            return run_coroutine_blocking(factory, timeout)
        # with the caller's context: the run scope (thread, call id, dry run) reaches it
        future = _worker_pool().submit(contextvars.copy_context().run, spec.handler, **kwargs)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise Deadline(f"no result after {timeout}s") from None

    async def _call_async(self, spec: ToolSpec, kwargs: dict[str, object]) -> object:
        timeout = self.timeout_for(spec)
        if spec.is_async:
            return await asyncio.wait_for(spec.handler(**kwargs), timeout)
        loop = asyncio.get_running_loop()
        call = functools.partial(contextvars.copy_context().run, spec.handler, **kwargs)
        return await asyncio.wait_for(loop.run_in_executor(_worker_pool(), call), timeout)


def _pause(seconds: float) -> Effect[None]:
    """Return the effect of waiting ``seconds`` between two attempts."""
    return Effect(functools.partial(time.sleep, seconds), functools.partial(asyncio.sleep, seconds))


def run_coroutine_blocking(factory: Callable[[], Awaitable[object]], timeout: float) -> object:
    """Run a coroutine to completion from sync code, with a timeout.

    Uses ``asyncio.run`` when this thread has no running loop, else a worker thread (a sync
    ``invoke`` made from inside async code must not block its own loop re-entrantly).
    """

    async def bounded() -> object:
        return await asyncio.wait_for(factory(), timeout)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(bounded())
    # copy the caller's context: the run scope and the trace reach the coroutine
    context = contextvars.copy_context()
    return _worker_pool().submit(context.run, asyncio.run, bounded()).result()
