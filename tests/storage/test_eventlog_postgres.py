"""The event log in PostgreSQL (``observability.pg_eventlog``): append, query, append-only, runs."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from noema_graph import build_agent_graph, open_backend
from noema_graph.observability import Observer
from noema_graph.observability.metrics import MetricsRegistry
from noema_graph.storage.postgres.eventlog import PostgresEventLog, event_log_for, read_events_at
from noema_graph.storage.sqlite.eventlog import TABLE
from tests.helpers import add, cfg
from tests.scripted import call, plan_reply, text, tools_reply


def _has_table(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (TABLE,)).fetchone()
        return bool(row and row[0])


def test_append_query_and_in_flight(pg_url: str) -> None:
    assert read_events_at(pg_url, thread_id="t") == [] and not _has_table(pg_url)  # read-only
    log, other = PostgresEventLog(pg_url), PostgresEventLog.open(pg_url)  # two "processes"
    first = log.append("agent.started", thread_id="t", trace_id="r1", data={"request": "hi"})
    log.append("tool.invoked", thread_id="t", trace_id="r1", call_id="c1", tool="add")
    other.append("tool.invoked", thread_id="t", trace_id="r1", call_id="c2", tool="add")
    last = other.append("tool.completed", thread_id="t", trace_id="r1", call_id="c1", step=2)
    other.append("agent.started", thread_id="u", trace_id="r2")
    assert last > first
    events = read_events_at(pg_url, thread_id="t")
    assert [e.type for e in events] == [
        "agent.started",
        "tool.invoked",
        "tool.invoked",
        "tool.completed",
    ]
    assert events[0].data == {"request": "hi"} and events[3].step == 2
    assert [e.call_id for e in log.in_flight(thread_id="t")] == ["c2"]
    assert [e.thread_id for e in log.query(types=["agent.started"], limit=5)] == ["t", "u"]
    with pytest.raises(ValueError, match="unknown event columns"):
        log.append("error", colour="red")


def test_the_log_is_append_only(pg_url: str) -> None:
    PostgresEventLog(pg_url).append("agent.started", thread_id="t")
    with psycopg.connect(pg_url) as conn:
        for sql in (f"UPDATE {TABLE} SET type = 'x'", f"DELETE FROM {TABLE}"):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(sql)
            conn.rollback()
    assert len(read_events_at(pg_url)) == 1


def test_a_run_on_postgres_logs_its_events_and_stats_read_them(pg_url: str, scripted: Any) -> None:
    model = scripted(plan_reply("Add"), tools_reply(call("add", {"a": 2, "b": 3}, "c1")), text("5"))
    with open_backend(pg_url) as backend:
        log = event_log_for(backend.checkpointer)
        assert isinstance(log, PostgresEventLog)
        graph = build_agent_graph(
            cfg(),
            model=model,
            tools=[add],
            checkpointer=backend.checkpointer,
            observer=Observer(event_log=log),
        )
        state = graph.invoke({"messages": [("user", "2+3?")]}, {"configurable": {"thread_id": "e"}})
    assert state["output"]["success"]
    events = read_events_at(pg_url, thread_id="e")
    types = [e.type for e in events]
    assert types[0] == "agent.started" and types[-1] == "agent.completed"
    assert {"tool.invoked", "tool.completed"} <= set(types)
    assert log.in_flight(thread_id="e") == []
    (summary,) = MetricsRegistry.from_events(events).snapshot().values()
    assert summary.executions == 1 and summary.tool_usage == {"add": 1}
