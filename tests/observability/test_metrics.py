"""Per-agent metrics: the in-process registry, OpenTelemetry instruments, ``stats``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from noema_graph.cli.events import app
from noema_graph.graphs import build_agent_graph
from noema_graph.observability import MetricsRegistry, Observer, read_events
from noema_graph.persistence import sqlite_checkpointer
from tests.helpers import TOOLS, cfg
from tests.observability.conftest import Telemetry
from tests.scripted import call, plan_reply, text, tools_reply


def _two_runs(telemetry: Telemetry, scripted: Any) -> None:
    ok = scripted(
        plan_reply("add"),
        tools_reply(call("add", {"a": 1, "b": 2}), call("explode", {"reason": "x"})),
        text("3"),
    )
    telemetry.run(ok)
    looping = scripted(
        plan_reply("one", "two"), text("one done"), tools_reply(call("add", {"a": 1, "b": 1}))
    )
    telemetry.run(looping, config=cfg(max_iterations=2, reflection_interval=10))


def test_registry_summarises_runs_per_agent(telemetry: Telemetry, scripted: Any) -> None:
    _two_runs(telemetry, scripted)
    summary = telemetry.metrics.snapshot()["noema"]
    assert summary.executions == 2
    assert summary.success_rate == 0.5 and summary.error_rate == 0.5
    assert summary.error_rate_by_code == {"max_iterations": 0.5}
    assert summary.tool_usage == {"add": 1, "explode": 1}  # the limit stopped the 2nd add
    assert summary.tool_errors == {"explode": 1}
    assert summary.avg_iterations == pytest.approx(2.0)
    assert summary.avg_cost_usd == pytest.approx((3 + 3) * 2e-5 / 2)
    assert summary.avg_execution_ms > 0


def test_metrics_are_exported_through_opentelemetry(telemetry: Telemetry, scripted: Any) -> None:
    _two_runs(telemetry, scripted)
    data = telemetry.reader.get_metrics_data()
    assert data is not None
    points: dict[str, list[Any]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points[metric.name] = list(metric.data.data_points)
    runs = {p.attributes["success"]: p.value for p in points["noema.agent.executions"]}
    assert runs == {True: 1, False: 1}
    (error,) = points["noema.agent.errors"]
    assert error.attributes == {"agent": "noema", "error.code": "max_iterations"}
    tools = {
        (p.attributes["tool"], p.attributes["status"]): p.value for p in points["noema.tool.calls"]
    }
    assert tools == {("add", "ok"): 1, ("explode", "error"): 1}
    (duration,) = points["noema.agent.duration"]
    assert duration.count == 2


def test_stats_rebuilds_metrics_from_the_event_log(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        assert isinstance(saver, SqliteSaver)
        graph = build_agent_graph(
            cfg(),
            model=scripted(plan_reply("a"), text("done")),
            tools=TOOLS,
            checkpointer=saver,
            observer=Observer(metrics=MetricsRegistry()),
        )
        graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "s"}})
    rebuilt = MetricsRegistry.from_events(read_events(db)).snapshot()
    assert rebuilt["noema"].executions == 1 and rebuilt["noema"].success_rate == 1.0
    result = CliRunner().invoke(app, ["stats", "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "noema" in result.output and "100%" in result.output
    as_json = CliRunner().invoke(app, ["stats", "--db", str(db), "--json"])
    assert '"executions": 1' in as_json.output
    missing = CliRunner().invoke(app, ["stats", "--db", str(tmp_path / "nope.sqlite")])
    assert missing.exit_code == 2  # a usage error: the file does not exist
