"""Fixtures: an in-memory span exporter, a fresh metrics registry, and an observer on both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from noema_graph.graphs import build_agent_graph
from noema_graph.observability import EventLog, MetricsRegistry, Observer
from tests.helpers import TOOLS, cfg

THREAD = {"configurable": {"thread_id": "t1"}}


@dataclass
class Telemetry:
    """Everything an observed run writes to, in memory."""

    observer: Observer
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    metrics: MetricsRegistry
    events: EventLog

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def run(self, model: Any, *, tools: Any = TOOLS, config: Any = None, **kw: Any) -> Any:
        graph = build_agent_graph(
            config or cfg(reflection_interval=10),
            model=model,
            tools=tools,
            checkpointer=InMemorySaver(),
            observer=self.observer,
        )
        return graph.invoke({"messages": [("user", "do it")]}, THREAD, **kw)


@pytest.fixture
def telemetry(tmp_path: Any) -> Iterator[Telemetry]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    metrics = MetricsRegistry(meter_provider=meter_provider)
    with EventLog.open(tmp_path / "events.sqlite") as events:
        observer = Observer(event_log=events, metrics=metrics, tracer_provider=tracer_provider)
        yield Telemetry(observer, exporter, reader, metrics, events)
    tracer_provider.shutdown()
    meter_provider.shutdown()
