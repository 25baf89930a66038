"""OpenTelemetry spans: run, nodes, model calls and tool calls share the run's trace id."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.tools import tool
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from noema_graph.context import RunContext, current_scope
from noema_graph.graphs import build_agent_graph
from noema_graph.observability import Observer, otel_trace_id
from noema_graph.observability.tracing import propagation_meta
from tests.helpers import cfg
from tests.observability.conftest import THREAD, Telemetry
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply


def _by_name(spans: Sequence[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        out.setdefault(span.name, []).append(span)
    return out


def _tool_run(scripted: Any) -> Any:
    return scripted(
        plan_reply("add"),
        tools_reply(call("add", {"a": 2, "b": 3}, "c1"), content="adding"),
        text("5"),
    )


def test_run_node_model_and_tool_spans(telemetry: Telemetry, scripted: Any) -> None:
    state = telemetry.run(_tool_run(scripted))
    trace_id = state["run"].trace_id
    spans = _by_name(telemetry.spans())
    (run,) = spans["agent.run noema"]
    assert {s.context.trace_id for s in telemetry.spans()} == {int(trace_id, 16)}
    assert run.attributes is not None and run.attributes["noema.success"] is True
    assert run.attributes["noema.total_tokens"] == 45
    nodes = [s for name, group in spans.items() if name.startswith("node ") for s in group]
    assert sorted(s.name for s in nodes) == sorted(
        ["node plan", "node execute_step", "node tool_node", "node execute_step", "node finalize"]
    )
    assert all(s.parent and s.parent.span_id == run.context.span_id for s in nodes)
    chats = spans["chat scripted"]
    assert len(chats) == 3
    for chat in chats:
        assert chat.attributes is not None
        assert chat.attributes["gen_ai.usage.input_tokens"] == 10
        assert chat.attributes["gen_ai.usage.output_tokens"] == 5
        assert chat.attributes["noema.cost_usd"] == pytest.approx(2e-5)
        assert chat.parent is not None
        assert chat.parent.span_id in {n.context.span_id for n in nodes}
    (tool_span,) = spans["execute_tool add"]
    (tool_node,) = spans["node tool_node"]
    assert tool_span.parent is not None and tool_span.parent.span_id == tool_node.context.span_id
    assert tool_node.attributes is not None and tool_node.attributes["gen_ai.tool.call.id"] == "c1"


def test_trace_id_comes_from_the_context(telemetry: Telemetry, scripted: Any) -> None:
    state = telemetry.run(
        scripted(plan_reply("a"), text("done")), context=RunContext(trace_id="req-42")
    )
    assert state["run"].trace_id == "req-42"
    assert state["output"]["metadata"]["trace_id"] == "req-42"
    expected = otel_trace_id("req-42")
    assert {s.context.trace_id for s in telemetry.spans()} == {expected}
    (run,) = _by_name(telemetry.spans())["agent.run noema"]
    assert run.attributes is not None and run.attributes["noema.trace_id"] == "req-42"


def test_trace_id_propagates_into_a_subagent(telemetry: Telemetry, scripted: Any) -> None:
    seen: list[str] = []

    @tool
    def delegate(question: str) -> str:
        """Ask a sub-agent."""
        scope = current_scope()
        assert scope is not None
        child = build_agent_graph(
            cfg(name="child"),
            model=ScriptedChatModel(script=[plan_reply("answer"), text("42")]),
            observer=telemetry.observer,
        )
        out = child.invoke({"messages": [("user", question)]})["output"]
        seen.append(out["metadata"]["trace_id"])
        return str(out["result"])

    model = scripted(
        plan_reply("delegate"), tools_reply(call("delegate", {"question": "q"})), text("42")
    )
    state = telemetry.run(model, tools=[delegate])
    assert seen == [state["run"].trace_id]
    spans = _by_name(telemetry.spans())
    (child_run,) = spans["agent.run child"]
    (parent_tool,) = spans["node tool_node"]
    assert child_run.context.trace_id == parent_tool.context.trace_id
    assert child_run.parent is not None
    assert child_run.parent.span_id == parent_tool.context.span_id
    assert len(spans["chat scripted"]) == 5  # 3 parent + 2 child calls, no duplicates


async def test_async_run_is_traced(telemetry: Telemetry, scripted: Any) -> None:
    graph = build_agent_graph(
        cfg(), model=_tool_run(scripted), tools=[_add()], observer=telemetry.observer
    )
    state = await graph.ainvoke({"messages": [("user", "add")]})
    assert state["output"]["success"]
    spans = _by_name(telemetry.spans())
    (tool_node,) = spans["node tool_node"]
    (tool_span,) = spans["execute_tool add"]
    assert tool_span.parent is not None and tool_span.parent.span_id == tool_node.context.span_id
    assert len(spans["chat scripted"]) == 3
    assert [e.type for e in telemetry.events.query()][-1] == "agent.completed"


def _add() -> Any:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return add


class _Broken(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        raise RuntimeError("collector down")


def test_a_broken_exporter_never_fails_a_run(
    scripted: Any, caplog: pytest.LogCaptureFixture
) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Broken()))
    graph = build_agent_graph(
        cfg(),
        model=_tool_run(scripted),
        tools=[_add()],
        observer=Observer(tracer_provider=provider, auto_event_log=False),
    )
    with caplog.at_level(logging.WARNING):
        state = graph.invoke({"messages": [("user", "add")]}, THREAD)
    assert state["output"]["success"]
    assert any("export" in r.getMessage().lower() for r in caplog.records)
    provider.shutdown()


def test_propagation_meta_carries_the_trace_into_outgoing_calls(
    telemetry: Telemetry, scripted: Any
) -> None:
    metas: list[dict[str, str]] = []

    @tool
    def remote(q: str) -> str:
        """Call another process."""
        metas.append(propagation_meta())
        return "ok"

    model = scripted(plan_reply("r"), tools_reply(call("remote", {"q": "x"})), text("ok"))
    state = telemetry.run(model, tools=[remote])
    (meta,) = metas
    trace_id = state["run"].trace_id
    assert meta["noema.trace_id"] == trace_id
    assert meta["traceparent"].split("-")[1] == trace_id


def test_without_a_provider_a_graph_pays_for_no_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """No TracerProvider anywhere: no tracing callbacks, no node spans; one installed: both."""
    from opentelemetry import trace

    from noema_graph.config import AgentConfig

    observer = Observer(auto_event_log=False)
    quiet, callbacks = observer.prepare(AgentConfig(), entry="plan", final="finalize")
    assert not quiet.tracing and callbacks == []
    monkeypatch.setattr(trace, "get_tracer_provider", TracerProvider)  # one is installed
    loud, callbacks = observer.prepare(AgentConfig(), entry="plan", final="finalize")
    assert loud.tracing and len(callbacks) == 1
    own = Observer(tracer_provider=TracerProvider(), auto_event_log=False)
    assert own.prepare(AgentConfig(), entry="plan", final="finalize")[0].tracing
