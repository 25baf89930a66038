"""Sync and async runs do the same work: outputs, events, event-log rows and spans match.

Each scenario runs once through ``graph.stream`` (blocking) and once through ``graph.astream``
on a real SQLite file each, with a fresh copy of the same script; everything that differs by
nature (ids, timestamps, durations) is masked before comparing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import StructuredTool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from noema_graph.graphs import build_agent_graph
from noema_graph.observability import Observer, read_events
from noema_graph.persistence import async_sqlite_checkpointer, sqlite_checkpointer
from tests.helpers import TOOLS, cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

VOLATILE = {
    "timestamp",
    "started_at",
    "ended_at",
    "trace_id",
    "run_id",
    "id",
    "execution_time_ms",
    "duration_ms",
    "time_ms",
    "ts",
    "seq",
}
THREAD = {"configurable": {"thread_id": "p1"}}


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "*" if k in VOLATILE else _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _slow(seconds: float) -> str:
    time.sleep(seconds)
    return "late"


SLOW = StructuredTool.from_function(_slow, name="slow", description="Sleep, then answer.")
Script = Callable[[], list[Any]]
SCENARIOS: dict[str, tuple[Script, dict[str, Any]]] = {
    "direct answer": (lambda: [plan_reply("Answer"), text("42")], {}),
    "tools in order and in parallel": (
        lambda: [
            plan_reply("Add and look up"),
            tools_reply(
                call("add", {"a": 1, "b": 2}, "c1"),
                call("lookup", {"key": "k"}, "c2"),
                call("add", {"a": 3, "b": 4}, "c3"),
            ),
            text("done"),
        ],
        {},
    ),
    "tool failure and invalid arguments": (
        lambda: [
            plan_reply("Try"),
            tools_reply(call("explode", {"reason": "x"}, "c1"), call("add", {"a": "no"}, "c2")),
            text("gave up"),
        ],
        {},
    ),
    "tool timeout": (
        lambda: [plan_reply("Wait"), tools_reply(call("slow", {"seconds": 2.0}, "c1")), text("ok")],
        {"tool_timeout_s": 0.2},
    ),
    "model error": (lambda: [plan_reply("Try"), OSError("provider broke")], {}),
}


def _run(path: Path, script: Script, overrides: dict[str, Any], *, use_async: bool) -> Any:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = Observer(tracer_provider=provider)
    model = ScriptedChatModel(script=script())
    config = cfg(reflection_interval=10, **overrides)
    inputs = {"messages": [("user", "do it")]}
    if use_async:

        async def go() -> list[Any]:
            async with async_sqlite_checkpointer(path) as saver:
                graph = build_agent_graph(
                    config, model=model, tools=[*TOOLS, SLOW], checkpointer=saver, observer=observer
                )
                chunks = [c async for c in graph.astream(inputs, THREAD, stream_mode="custom")]
                state = await graph.aget_state(THREAD)
                return [chunks, state.values]

        chunks, values = asyncio.run(go())
    else:
        with sqlite_checkpointer(path) as saver:
            graph = build_agent_graph(
                config, model=model, tools=[*TOOLS, SLOW], checkpointer=saver, observer=observer
            )
            chunks = list(graph.stream(inputs, THREAD, stream_mode="custom"))
            values = graph.get_state(THREAD).values
    rows = [
        (e.type, e.step, e.tool, e.status, _mask(e.data)) for e in read_events(path, thread_id="p1")
    ]
    # a timed-out call's own span: async cancels it, a blocking call goes on in its thread
    spans = sorted(
        (s.name, str(s.status.status_code))
        for s in exporter.get_finished_spans()
        if s.name != "execute_tool slow"
    )
    provider.shutdown()
    return {
        "output": _mask(values["output"]),
        "events": _mask(chunks),
        "rows": rows,
        "spans": spans,
    }


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_sync_and_async_runs_match(name: str, tmp_path: Path) -> None:
    script, overrides = SCENARIOS[name]
    sync = _run(tmp_path / "sync.sqlite", script, overrides, use_async=False)
    async_ = _run(tmp_path / "async.sqlite", script, overrides, use_async=True)
    assert sync["output"] == async_["output"]
    assert sync["events"] == async_["events"]
    assert sync["rows"] == async_["rows"]
    assert sync["rows"], "the event log was written"
    assert sync["spans"] == async_["spans"]


def test_the_tool_timeout_holds_on_both_paths(tmp_path: Path) -> None:
    script, overrides = SCENARIOS["tool timeout"]
    for use_async in (False, True):
        out = _run(tmp_path / f"t{use_async}.sqlite", script, overrides, use_async=use_async)
        (step,) = [s for s in out["output"]["reasoning"]["steps"] if s["kind"] == "tool"]
        assert "timed out after 0.2s" in step["observation"], use_async


def test_calls_of_a_message_run_in_order_and_are_recorded_so(tmp_path: Path) -> None:
    script, overrides = SCENARIOS["tools in order and in parallel"]
    out = _run(tmp_path / "o.sqlite", script, overrides, use_async=False)["output"]
    calls = out["metadata"]["tool_calls"]
    assert [(c["tool"], c["status"]) for c in calls] == [
        ("add", "ok"),
        ("lookup", "ok"),
        ("add", "ok"),
    ]
    started = [c["started_at"] for c in calls]
    assert started == sorted(started)  # dependent calls never overlap out of order
