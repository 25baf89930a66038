"""The Observer: instruments a graph's nodes with logs, metrics, spans and the event log.

Graph factories take ``observer=``; without one they use :func:`default_observer`, which
logs through ``logging``, counts into :func:`~noema_graph.observability.metrics.default_registry`,
traces through the global OpenTelemetry TracerProvider (a no-op until one is installed) and,
when the checkpointer is a ``SqliteSaver``, writes the event log into the same database.
Nothing here may fail a run: instrumentation errors are logged as warnings.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.runtime import Runtime
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, TracerProvider

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.errors import TransientModelError
from noema_graph.observability.logs import log_fields
from noema_graph.observability.metrics import MetricsRegistry, default_registry
from noema_graph.observability.probe import GraphInfo, NodeCall, RunSpan
from noema_graph.observability.redact import SensitiveTools
from noema_graph.observability.tracing import (
    CostFn,
    OtelCallbackHandler,
    get_tracer,
    parent_context,
)
from noema_graph.storage.sqlite.eventlog import EventLog

logger = logging.getLogger(__name__)

MAX_OPEN_RUNS = 1_000


class Observer:
    """Logs, metrics, OpenTelemetry spans and (optionally) an event log for graph runs.

    Args:
        event_log: an :class:`EventLog`, or a SQLite path to open one on. Without it, graphs
            whose checkpointer is a ``SqliteSaver`` log into that database
            (``auto_event_log``).
        metrics: the registry to count into (default: the process-wide one).
        tracer_provider: where spans go (default: the global OpenTelemetry provider).
        auto_event_log: write the event log beside a SqliteSaver's checkpoints.
    """

    def __init__(
        self,
        *,
        event_log: EventLog | str | Path | None = None,
        metrics: MetricsRegistry | None = None,
        tracer_provider: TracerProvider | None = None,
        auto_event_log: bool = True,
    ) -> None:
        """Configure what the observer writes to; nothing is instrumented yet."""
        self.event_log = (
            EventLog.open(event_log) if isinstance(event_log, str | Path) else event_log
        )
        self.metrics = metrics or default_registry()
        self.tracer = get_tracer(tracer_provider)
        self._own_provider = tracer_provider is not None
        self.auto_event_log = auto_event_log
        self._lock = threading.Lock()
        self._runs: dict[str, RunSpan] = {}
        self._steps: dict[str, int] = {}

    def prepare(
        self,
        config: AgentConfig,
        *,
        entry: str,
        final: str,
        checkpointer: object = None,
        tools: Sequence[BaseTool] = (),
        cost: CostFn | None = None,
    ) -> tuple[GraphInfo, list[BaseCallbackHandler]]:
        """Return what the nodes of one graph are observed with, and the graph's callbacks.

        Spans are recorded when the observer has its own ``tracer_provider`` or a global
        OpenTelemetry provider is installed by the time the graph is built; otherwise the
        graph carries no tracing callbacks and its nodes open no spans (nothing is paid for
        traces no one collects).
        """
        tracing = self.tracing()
        info = GraphInfo(
            agent=config.name,
            version=config.version,
            entry=frozenset({entry}),
            final=frozenset({final}),
            sensitive=SensitiveTools(tools),
            event_log=self._event_log_for(checkpointer),
            tracing=tracing,
        )
        if not tracing:
            return info, []
        return info, [OtelCallbackHandler(self.tracer, agent=config.name, cost=cost)]

    def tracing(self) -> bool:
        """Whether spans go anywhere: an own provider, or a global one that is installed."""
        return self._own_provider or not isinstance(
            trace.get_tracer_provider(), trace.ProxyTracerProvider
        )

    def _event_log_for(self, checkpointer: object) -> EventLog | None:
        if self.event_log is not None or not self.auto_event_log:
            return self.event_log
        try:
            if isinstance(checkpointer, SqliteSaver):
                return EventLog.for_saver(checkpointer)
            path = getattr(checkpointer, "noema_path", None)  # an async saver of ours
            if path is not None:
                return EventLog.open(path)
            from noema_graph.storage.postgres.eventlog import event_log_for

            return event_log_for(checkpointer)  # a PostgreSQL saver of open_backend, or None
        except Exception:  # instrumentation never fails a build or a run
            logger.warning("event log unavailable on the checkpointer", exc_info=True)
        return None

    @contextmanager
    def observe(
        self,
        info: GraphInfo,
        name: str,
        state: Mapping[str, object],
        runtime: Runtime[RunContext],
        config: RunnableConfig,
    ) -> Generator[NodeCall | None]:
        """Open a NodeCall around one node execution (None when instrumentation failed).

        A pause for a person, a handoff and a transient model error that LangGraph retries
        are control flow: they close the node's span without failing the run.
        """
        try:
            call = NodeCall(self, info, name, state, runtime, config)
        except Exception:  # instrumentation never fails a run
            logger.warning("instrumentation failed before node %s", name, exc_info=True)
            yield None
            return
        with (
            log_fields(call.fields),
            trace.use_span(call.span, end_on_exit=False) if info.tracing else nullcontext(),
        ):
            try:
                yield call
            except GraphInterrupt as exc:
                _safely(call.pause, exc)
                raise
            except (GraphBubbleUp, TransientModelError):
                call.span.end()
                raise
            except Exception as exc:
                _safely(call.fail, exc)
                raise

    def run_span(self, trace_id: str, info: GraphInfo, *, start: bool) -> RunSpan:
        """Return the open span of run ``trace_id``; ``start`` opens a fresh one."""
        with self._lock:
            current = self._runs.get(trace_id)
            if current is not None and not start:
                return current
            if current is not None:
                current.span.end()
            if len(self._runs) >= MAX_OPEN_RUNS:
                oldest = next(iter(self._runs))
                self._runs.pop(oldest).span.end()
            span = (
                INVALID_SPAN
                if not info.tracing
                else self.tracer.start_span(
                    f"agent.run {info.agent}",
                    context=parent_context(trace_id),
                    attributes={
                        "noema.agent": info.agent,
                        "noema.agent_version": info.version,
                        "noema.trace_id": trace_id,
                        "noema.resumed": not start,
                    },
                )
            )
            self._runs[trace_id] = run = RunSpan(span)
            if start:
                self._steps[trace_id] = 0
            return run

    def end_run(self, trace_id: str) -> None:
        """Close the span of run ``trace_id`` if it is open."""
        with self._lock:
            run = self._runs.pop(trace_id, None)
            self._steps.pop(trace_id, None)
        if run is not None:
            run.span.end()

    def step_of(self, trace_id: str, trace_so_far: Sequence[object] | None) -> int:
        """Return the number of reasoning steps run ``trace_id`` has recorded so far."""
        with self._lock:
            if trace_so_far is not None:
                self._steps[trace_id] = len(trace_so_far)
            return self._steps.get(trace_id, 0)

    def advance(self, trace_id: str, steps: int) -> None:
        """Count ``steps`` more reasoning steps of run ``trace_id``."""
        with self._lock:
            if trace_id in self._runs:
                self._steps[trace_id] = self._steps.get(trace_id, 0) + steps


def _safely(fn: Callable[..., None], *args: object) -> None:
    """Call ``fn``; an instrumentation error is logged as a warning, never raised."""
    try:
        fn(*args)
    except Exception:  # instrumentation never fails a run
        logger.warning("instrumentation failed in %s", getattr(fn, "__name__", fn), exc_info=True)


_DEFAULT: list[Observer] = []


def default_observer() -> Observer:
    """Return the process-wide observer graph factories use when given none."""
    if not _DEFAULT:
        _DEFAULT.append(Observer())
    return _DEFAULT[0]
