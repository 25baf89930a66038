"""Failures: a node that raises is logged, counted and traced; broken instrumentation is not."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

from noema_graph.graphs import build_agent_graph
from noema_graph.observability import EventLog, MetricsRegistry, Observer
from tests.helpers import TOOLS, cfg
from tests.observability.conftest import THREAD, Telemetry
from tests.scripted import ScriptedChatModel, ScriptExhausted, plan_reply, text


def test_a_failing_node_is_logged_counted_and_traced(
    telemetry: Telemetry, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(script=[plan_reply("a")])  # the step's model call raises
    with pytest.raises(ScriptExhausted):
        telemetry.run(model)
    assert [e.type for e in telemetry.events.query()][-1] == "agent.failed"
    assert telemetry.metrics.snapshot()["noema"].error_rate_by_code == {"ScriptExhausted": 1.0}
    (run,) = [s for s in telemetry.spans() if s.name == "agent.run noema"]
    assert run.status.status_code is StatusCode.ERROR
    failed = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert failed and failed[0].exc_info is not None
    assert failed[0].__dict__["node"] == "execute_step"


def test_limit_hits_are_events(telemetry: Telemetry, scripted: Any) -> None:
    model = scripted(plan_reply("one", "two", "three"), text("r1"), text("r2"))
    state = telemetry.run(model, config=cfg(max_iterations=2, reflection_interval=10))
    assert state["output"]["error"]["code"] == "max_iterations"
    (hit,) = telemetry.events.query(types=["limit.hit"])
    assert hit.status == "ok" and "iteration limit" in hit.data["thought"]


def test_broken_instrumentation_never_fails_a_run(
    tmp_path: Path, scripted: Any, caplog: pytest.LogCaptureFixture
) -> None:
    events = EventLog.open(tmp_path / "e.sqlite")
    events.close()  # every append now raises sqlite3.ProgrammingError
    observer = Observer(event_log=events, metrics=MetricsRegistry())
    graph = build_agent_graph(
        cfg(), model=scripted(plan_reply("a"), text("done")), tools=TOOLS, observer=observer
    )
    with caplog.at_level(logging.WARNING):
        state = graph.invoke({"messages": [("user", "hi")]}, THREAD)
    assert state["output"]["success"]
    assert any("instrumentation failed" in r.getMessage() for r in caplog.records)
