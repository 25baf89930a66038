"""Per-agent run metrics: an in-process registry, mirrored to OpenTelemetry metrics.

The registry answers from Python (:meth:`MetricsRegistry.snapshot`) and can be rebuilt from
an event log (:meth:`MetricsRegistry.from_events`), which is what ``noema-graph stats`` does.
Every record is also sent to OpenTelemetry instruments on the given MeterProvider, or on the
global one (a no-op until the user installs a provider with an exporter).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics
from opentelemetry.metrics import MeterProvider

from noema_graph.storage.sqlite.eventlog import LoggedEvent

METER_NAME = "noema_graph"


@dataclass
class AgentMetrics:
    """Running totals for one agent."""

    executions: int = 0
    successes: int = 0
    total_ms: float = 0.0
    total_iterations: int = 0
    total_cost_usd: float = 0.0
    total_tokens: int = 0
    errors: Counter[str] = field(default_factory=Counter[str])
    tool_calls: Counter[str] = field(default_factory=Counter[str])
    tool_errors: Counter[str] = field(default_factory=Counter[str])

    def summary(self) -> AgentSummary:
        """Return rates and averages over the runs recorded so far."""
        n = self.executions
        return AgentSummary(
            executions=n,
            success_rate=self.successes / n if n else 0.0,
            error_rate=(n - self.successes) / n if n else 0.0,
            avg_execution_ms=self.total_ms / n if n else 0.0,
            avg_iterations=self.total_iterations / n if n else 0.0,
            avg_cost_usd=self.total_cost_usd / n if n else 0.0,
            total_cost_usd=self.total_cost_usd,
            total_tokens=self.total_tokens,
            tool_usage=dict(self.tool_calls),
            tool_errors=dict(self.tool_errors),
            error_rate_by_code={code: count / n for code, count in self.errors.items()}
            if n
            else {},
        )


@dataclass(frozen=True)
class AgentSummary:
    """What ``stats`` shows for one agent."""

    executions: int
    success_rate: float
    error_rate: float
    avg_execution_ms: float
    avg_iterations: float
    avg_cost_usd: float
    total_cost_usd: float
    total_tokens: int
    tool_usage: dict[str, int]
    tool_errors: dict[str, int]
    error_rate_by_code: dict[str, float]


COUNTERS: dict[str, tuple[str, str]] = {
    "noema.agent.executions": ("{run}", "Finished runs by success."),
    "noema.agent.tokens": ("{token}", "Tokens used by runs."),
    "noema.agent.errors": ("{run}", "Failed runs by error code."),
    "noema.tool.calls": ("{call}", "Tool calls by tool and status."),
}
"""OpenTelemetry counters the registry mirrors its records to: name -> (unit, description)."""
HISTOGRAMS: dict[str, tuple[str, str]] = {
    "noema.agent.duration": ("ms", "Run execution time."),
    "noema.agent.iterations": ("{iteration}", "Iterations per run."),
    "noema.agent.cost": ("USD", "Estimated cost per run."),
}
"""OpenTelemetry histograms the registry mirrors its records to: name -> (unit, description)."""


class _Instruments:
    """The OpenTelemetry instruments of :data:`COUNTERS` and :data:`HISTOGRAMS`, by name."""

    def __init__(self, provider: MeterProvider | None) -> None:
        meter = (provider or metrics.get_meter_provider()).get_meter(METER_NAME)
        self._counters = {
            name: meter.create_counter(name, unit=unit, description=description)
            for name, (unit, description) in COUNTERS.items()
        }
        self._histograms = {
            name: meter.create_histogram(name, unit=unit, description=description)
            for name, (unit, description) in HISTOGRAMS.items()
        }

    def add(self, name: str, amount: int, attributes: dict[str, Any]) -> None:
        """Add ``amount`` to the counter ``name``."""
        self._counters[name].add(amount, attributes)

    def record(self, name: str, value: float, attributes: dict[str, Any]) -> None:
        """Record ``value`` in the histogram ``name``."""
        self._histograms[name].record(value, attributes)


class MetricsRegistry:
    """Thread-safe per-agent counters; records also go to OpenTelemetry."""

    def __init__(self, *, meter_provider: MeterProvider | None = None) -> None:
        """Create an empty registry; instruments come from ``meter_provider`` or the global."""
        self._lock = threading.Lock()
        self._agents: dict[str, AgentMetrics] = {}
        self._otel = _Instruments(meter_provider)

    def record_run(
        self,
        agent: str,
        *,
        success: bool,
        duration_ms: float,
        iterations: int,
        cost_usd: float | None,
        tokens: int,
        error_code: str | None = None,
    ) -> None:
        """Count one finished run of ``agent``."""
        with self._lock:
            stats = self._agents.setdefault(agent, AgentMetrics())
            stats.executions += 1
            stats.successes += int(success)
            stats.total_ms += duration_ms
            stats.total_iterations += iterations
            stats.total_cost_usd += cost_usd or 0.0
            stats.total_tokens += tokens
            if not success:
                stats.errors[error_code or "unknown"] += 1
        attrs: dict[str, Any] = {"agent": agent}
        otel = self._otel
        otel.add("noema.agent.executions", 1, {**attrs, "success": success})
        otel.record("noema.agent.duration", duration_ms, attrs)
        otel.record("noema.agent.iterations", iterations, attrs)
        otel.record("noema.agent.cost", cost_usd or 0.0, attrs)
        otel.add("noema.agent.tokens", tokens, attrs)
        if not success:
            otel.add("noema.agent.errors", 1, {**attrs, "error.code": error_code or "unknown"})

    def record_tool(self, agent: str, tool: str, *, status: str) -> None:
        """Count one tool call of ``agent``."""
        with self._lock:
            stats = self._agents.setdefault(agent, AgentMetrics())
            stats.tool_calls[tool] += 1
            if status != "ok":
                stats.tool_errors[tool] += 1
        self._otel.add("noema.tool.calls", 1, {"agent": agent, "tool": tool, "status": status})

    def snapshot(self) -> dict[str, AgentSummary]:
        """Return a summary per agent name."""
        with self._lock:
            return {name: stats.summary() for name, stats in sorted(self._agents.items())}

    def reset(self) -> None:
        """Forget every record (the OpenTelemetry side keeps its own state)."""
        with self._lock:
            self._agents.clear()

    @classmethod
    def from_events(cls, events: Iterable[LoggedEvent]) -> MetricsRegistry:
        """Rebuild the registry from ``agent.completed`` and ``tool.completed`` events."""
        registry = cls(meter_provider=_NOOP)
        for event in events:
            if event.type == "agent.completed":
                registry.record_run(event.agent or "unknown", **_run_fields(event.data))
            elif event.type == "tool.completed" and event.tool:
                registry.record_tool(
                    event.agent or "unknown", event.tool, status=event.status or "ok"
                )
        return registry


def _run_fields(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "success": bool(data.get("success")),
        "duration_ms": float(data.get("execution_time_ms") or 0.0),
        "iterations": int(data.get("iterations") or 0),
        "cost_usd": data.get("cost_usd"),
        "tokens": int(data.get("total_tokens") or 0),
        "error_code": data.get("error_code"),
    }


_NOOP = metrics.NoOpMeterProvider()
_DEFAULT: list[MetricsRegistry] = []


def default_registry() -> MetricsRegistry:
    """Return the process-wide registry graphs record to unless given another."""
    if not _DEFAULT:
        _DEFAULT.append(MetricsRegistry())
    return _DEFAULT[0]
