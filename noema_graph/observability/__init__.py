"""Observability: structured logs, metrics, OpenTelemetry traces and an append-only event log.

Graph factories instrument every node with an :class:`Observer` (``observer=``; the default
one otherwise). Turn the pieces on with:

- logs: ``configure_logging(json=True)`` (or any ``logging`` handler with
  :class:`RunContextFilter` and :class:`RedactingFilter`);
- metrics: read :func:`default_registry` ``.snapshot()``; install an OpenTelemetry
  ``MeterProvider`` (globally or ``MetricsRegistry(meter_provider=...)``) to export them;
- traces: install an OpenTelemetry ``TracerProvider`` (globally or ``tracer_provider=``)
  before building the graph (a graph built without one records no spans);
- event log: use a ``SqliteSaver`` checkpointer, or pass ``Observer(event_log=path)``.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.observability.logs import (
        JsonFormatter,
        RedactingFilter,
        RunContextFilter,
        configure_logging,
    )
    from noema_graph.observability.metrics import AgentSummary, MetricsRegistry, default_registry
    from noema_graph.observability.observer import Observer, default_observer
    from noema_graph.observability.redact import SensitiveTools, redact_args, scrub
    from noema_graph.observability.tracing import OtelCallbackHandler, otel_trace_id
    from noema_graph.storage.sqlite.eventlog import EventLog, LoggedEvent, read_events

__all__ = [
    "AgentSummary",
    "EventLog",
    "JsonFormatter",
    "LoggedEvent",
    "MetricsRegistry",
    "Observer",
    "OtelCallbackHandler",
    "RedactingFilter",
    "RunContextFilter",
    "SensitiveTools",
    "configure_logging",
    "default_observer",
    "default_registry",
    "otel_trace_id",
    "read_events",
    "redact_args",
    "scrub",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.observability.logs": (
            "JsonFormatter",
            "RedactingFilter",
            "RunContextFilter",
            "configure_logging",
        ),
        "noema_graph.observability.metrics": (
            "AgentSummary",
            "MetricsRegistry",
            "default_registry",
        ),
        "noema_graph.observability.observer": ("Observer", "default_observer"),
        "noema_graph.observability.redact": ("SensitiveTools", "redact_args", "scrub"),
        "noema_graph.observability.tracing": ("OtelCallbackHandler", "otel_trace_id"),
        "noema_graph.storage.sqlite.eventlog": ("EventLog", "LoggedEvent", "read_events"),
    },
)
