"""What happens around one node execution: log fields, spans, events, logs and metrics.

:class:`NodeCall` is created before a node runs (``agent.started`` or ``tool.invoked`` are
written then, before any tool executes) and finished with the node's update or exception.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from uuid import uuid4

from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphInterrupt
from langgraph.runtime import Runtime
from opentelemetry import trace
from opentelemetry.trace import INVALID_SPAN, Span, Status, StatusCode

from noema_graph.context import RunContext, context_of, current_scope
from noema_graph.observability.metrics import MetricsRegistry
from noema_graph.observability.redact import SensitiveTools, scrub
from noema_graph.observability.tracing import active_trace_id, fail_span
from noema_graph.state.models import ReasoningStep
from noema_graph.storage.sqlite.eventlog import EventLog

logger = logging.getLogger("noema_graph.run")

PREVIEW_CHARS = 500
STEP_EVENTS: dict[str, str] = {
    "plan": "plan.created",
    "plan_fallback": "plan.created",
    "plan_revised": "plan.revised",
    "reflection": "reflection",
    "limit": "limit.hit",
    "error": "error",
}
_LEVELS: dict[str, int] = {
    "error": logging.ERROR,
    "limit": logging.WARNING,
    "hallucinated_action": logging.WARNING,
    "plan_fallback": logging.WARNING,
}


@dataclass(frozen=True)
class GraphInfo:
    """What the instrumentation knows about one compiled graph."""

    agent: str
    version: str
    entry: frozenset[str]
    final: frozenset[str]
    sensitive: SensitiveTools
    event_log: EventLog | None = None
    tracing: bool = True
    """Whether spans are recorded (a TracerProvider was installed when the graph was built)."""


@dataclass
class RunSpan:
    """The open span of a run in this process, and when the run started."""

    span: Span
    started: float = field(default_factory=time.monotonic)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return scrub(text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + "...")


def _unwrap(value: Any) -> Any:
    """Return the value inside an ``Overwrite`` (or the value itself)."""
    return getattr(value, "value", value)


def _awaited(value: object) -> dict[str, object]:
    """Return what one interrupt waits for: its type and call ids/tools, never arguments."""
    if not isinstance(value, Mapping):
        return {"type": "input"}
    if value.get("type") == "confirm":
        calls = [c for c in value.get("calls") or () if isinstance(c, Mapping)]
        return {
            "type": "confirm",
            "call_ids": [str(c.get("id")) for c in calls],
            "tools": [str(c.get("name")) for c in calls],
        }
    return {"type": str(value.get("type") or "input"), "call_id": value.get("call_id")}


def _trace_id(
    entry: bool, state: Any, runtime: Runtime[RunContext]
) -> tuple[str, str, Runtime[RunContext]]:
    """Return (trace id, run id, runtime); an entry node gets a trace id in its context."""
    ctx = context_of(runtime.context)
    if entry:
        scope = current_scope()
        chosen = ctx.trace_id or (scope and scope.trace_id) or active_trace_id() or uuid4().hex
        if ctx.trace_id is None:
            runtime = runtime.override(context=replace(ctx, trace_id=chosen))
        return chosen, "", runtime
    if isinstance(state, Mapping) and "calls" in state:
        first = state["calls"][0] if state["calls"] else {}
        return str(first.get("trace_id") or ""), str(first.get("run_id") or ""), runtime
    run = state.get("run") if isinstance(state, Mapping) else None
    if run is not None:
        return run.trace_id, run.run_id, runtime
    return ctx.trace_id or "", "", runtime


class Observer(Protocol):
    """What a :class:`NodeCall` asks of its observer (:class:`~.observer.Observer` gives it).

    A protocol, so this module does not import the observer, which imports it.
    """

    metrics: MetricsRegistry
    tracer: trace.Tracer

    def run_span(self, trace_id: str, info: GraphInfo, *, start: bool) -> RunSpan:
        """Return the open span of run ``trace_id``; ``start`` opens a fresh one."""
        ...

    def end_run(self, trace_id: str) -> None:
        """Close the span of run ``trace_id`` if it is open."""
        ...

    def step_of(self, trace_id: str, trace_so_far: Sequence[object] | None) -> int:
        """Return the number of reasoning steps run ``trace_id`` has recorded so far."""
        ...

    def advance(self, trace_id: str, steps: int) -> None:
        """Count ``steps`` more reasoning steps of run ``trace_id``."""
        ...


class NodeCall:
    """One execution of node ``name``: opened by the constructor, closed by finish/fail."""

    def __init__(
        self,
        observer: Observer,
        info: GraphInfo,
        name: str,
        state: Any,
        runtime: Runtime[RunContext],
        config: RunnableConfig,
    ) -> None:
        """Resolve the run's ids, open spans, and log the run start or the tool call."""
        self.observer, self.info, self.name, self.state = observer, info, name, state
        self.entry = name in info.entry
        group = state if isinstance(state, Mapping) and "calls" in state else None
        self.tasks: dict[str, Mapping[str, Any]] | None = (
            None if group is None else {str(t["tool_call"].get("id")): t for t in group["calls"]}
        )
        self.trace_id, self.run_id, self.runtime = _trace_id(self.entry, state, runtime)
        ctx = context_of(self.runtime.context)
        trace_len = (
            state.get("trace") if isinstance(state, Mapping) and self.tasks is None else None
        )
        self.step = 0 if self.entry else observer.step_of(self.trace_id, trace_len)
        self.fields: dict[str, Any] = {
            "agent_name": info.agent,
            "agent_version": info.version,
            "user_id": ctx.user_id,
            "correlation_id": ctx.correlation_id,
            "session_id": ctx.session_id,
            "trace_id": self.trace_id,
            "run_id": self.run_id,
            "thread_id": (config.get("configurable") or {}).get("thread_id"),
            "node": name,
            "step": self.step,
        }
        self.started = time.monotonic()
        self.run = observer.run_span(self.trace_id, info, start=self.entry)
        self.span: Span = (
            observer.tracer.start_span(
                f"node {name}",
                context=trace.set_span_in_context(self.run.span),
                attributes={"noema.node": name, **self._span_attrs()},
            )
            if info.tracing
            else INVALID_SPAN
        )
        self.verbose = info.event_log is not None or logger.isEnabledFor(logging.INFO)
        """Whether anyone reads this call's logs or events (previews are built only then)."""
        if self.entry:
            self._started()
        for task in (self.tasks or {}).values():
            self._tool_invoked(task)

    def _span_attrs(self) -> dict[str, Any]:
        return {
            f"noema.{k}": v
            for k, v in self.fields.items()
            if v not in (None, "") and k not in {"node", "step"}
        }

    def emit(self, type_: str, **columns: Any) -> None:
        """Append an event to the graph's event log (if any) with the run's columns."""
        if self.info.event_log is None:
            return
        self.info.event_log.append(
            type_,
            thread_id=self.fields["thread_id"],
            trace_id=self.trace_id,
            run_id=self.run_id,
            agent=self.info.agent,
            user_id=self.fields["user_id"],
            correlation_id=self.fields["correlation_id"],
            **columns,
        )

    def log(
        self,
        level: int,
        msg: str,
        *args: object,
        exc_info: BaseException | None = None,
        **extra: object,
    ) -> None:
        """Log through ``noema_graph.run`` with the run fields (and ``extra``) on the record."""
        logger.log(level, msg, *args, exc_info=exc_info, extra={**self.fields, **extra})

    def _started(self) -> None:
        request = ""
        messages = self.state.get("messages") if isinstance(self.state, Mapping) else None
        if messages:
            request = _short(getattr(messages[-1], "text", ""))
        self.log(logging.INFO, "run started: %s", request, event="agent.started")
        self.emit("agent.started", step=0, data={"request": request, "node": self.name})

    def _tool_invoked(self, task: Mapping[str, Any]) -> None:
        call = task["tool_call"]
        tool, call_id = str(call.get("name")), str(call.get("id"))
        if len(self.tasks or ()) == 1:
            self.span.set_attribute("gen_ai.tool.name", tool)
            self.span.set_attribute("gen_ai.tool.call.id", call_id)
        if not self.verbose:
            return
        args = self.info.sensitive.redact(tool, call.get("args"))
        self.log(
            logging.INFO,
            "tool invoked: %s(%s)",
            tool,
            _short(args),
            event="tool.invoked",
            tool=tool,
            call_id=call_id,
        )
        self.emit(
            "tool.invoked",
            step=self.step,
            call_id=call_id,
            tool=tool,
            data={"args": args, "round": task.get("round"), "index": task.get("index")},
        )

    def finish(self, update: Any) -> None:
        """Log and record the node's update, then close its span (and the run's, at the end)."""
        try:
            if isinstance(update, Mapping):
                self._record(update)
        except Exception:  # instrumentation never fails a run
            logger.warning("instrumentation failed after node %s", self.name, exc_info=True)
        finally:
            self.span.end()

    def _record(self, update: Mapping[str, Any]) -> None:
        run = update.get("run")
        if self.entry and run is not None:
            self.run_id = self.fields["run_id"] = run.run_id
            self.run.span.set_attribute("noema.run_id", run.run_id)
            self.run.span.set_attribute("gen_ai.request.model", run.model)
        steps: list[ReasoningStep] = list(_unwrap(update.get("trace")) or [])
        for offset, step in enumerate(steps, start=1):
            self._step(step, self.step + offset)
        self.fields["step"] = self.step + len(steps)
        self.observer.advance(self.trace_id, len(steps))
        output = update.get("output")
        if self.name in self.info.final and output:
            self._completed(output)

    def _step(self, step: ReasoningStep, number: int) -> None:
        task = (self.tasks or {}).get(step.call_id or "")
        if task is not None and step.action is not None:
            self._tool_completed(task, step, number)
            return
        if not self.verbose:
            return
        level = _LEVELS.get(step.kind, logging.INFO)
        self.log(
            level,
            "step %d %s: %s | observation: %s",
            number,
            step.kind,
            _short(step.thought),
            _short(step.observation or ""),
            step=number,
            kind=step.kind,
            status=step.status,
        )
        if (type_ := STEP_EVENTS.get(step.kind)) is not None:
            self.emit(
                type_,
                step=number,
                status=step.status,
                data={"thought": _short(step.thought), "observation": _short(step.observation)},
            )

    def _tool_completed(self, task: Mapping[str, Any], step: ReasoningStep, number: int) -> None:
        call = task["tool_call"]
        tool, call_id = str(call.get("name")), str(call.get("id"))
        self.span.set_attribute("noema.tool.status", step.status)
        if step.status == "error":
            self.span.set_status(Status(StatusCode.ERROR, "tool call failed"))
        self.observer.metrics.record_tool(self.info.agent, tool, status=step.status)
        if not self.verbose:
            return
        args = self.info.sensitive.redact(tool, call.get("args"))
        self.log(
            logging.WARNING if step.status == "error" else logging.INFO,
            "step %d %s: thought: %s | action: %s(%s) | observation: %s",
            number,
            step.kind,
            _short(step.thought),
            tool,
            _short(args),
            _short(step.observation or ""),
            step=number,
            kind=step.kind,
            event="tool.completed",
            tool=tool,
            call_id=call_id,
            status=step.status,
            duration_ms=round(step.duration_ms, 3),
        )
        self.emit(
            "tool.completed",
            step=number,
            call_id=call_id,
            tool=tool,
            status=step.status,
            data={
                "duration_ms": round(step.duration_ms, 3),
                "kind": step.kind,
                "observation": _short(step.observation or ""),
            },
        )

    def _completed(self, output: Mapping[str, Any]) -> None:
        meta = output.get("metadata") or {}
        error = output.get("error") or {}
        summary: dict[str, Any] = {
            "success": bool(output.get("success")),
            "error_code": error.get("code"),
            "execution_time_ms": meta.get("execution_time_ms"),
            "iterations": meta.get("iterations"),
            "total_tokens": (meta.get("token_usage") or {}).get("total_tokens", 0),
            "cost_usd": meta.get("estimated_cost_usd"),
            "tools_used": meta.get("tools_used") or [],
            "model": meta.get("model"),
            "stop_reason": meta.get("stop_reason"),
        }
        self.log(
            logging.INFO if summary["success"] else logging.WARNING,
            "run completed: success=%s tokens=%s cost_usd=%s time_ms=%s iterations=%s error=%s",
            summary["success"],
            summary["total_tokens"],
            summary["cost_usd"],
            summary["execution_time_ms"],
            summary["iterations"],
            summary["error_code"],
            event="agent.completed",
            **{k: summary[k] for k in ("success", "error_code", "execution_time_ms")},
            **{k: summary[k] for k in ("iterations", "total_tokens", "cost_usd")},
        )
        self.emit("agent.completed", status="ok" if summary["success"] else "error", data=summary)
        self.observer.metrics.record_run(
            self.info.agent,
            success=summary["success"],
            duration_ms=float(summary["execution_time_ms"] or 0.0),
            iterations=int(summary["iterations"] or 0),
            cost_usd=summary["cost_usd"],
            tokens=int(summary["total_tokens"] or 0),
            error_code=summary["error_code"],
        )
        span = self.run.span
        for key in ("success", "iterations", "total_tokens", "cost_usd", "error_code"):
            if summary[key] is not None:
                span.set_attribute(f"noema.{key}", summary[key])
        if not summary["success"]:
            span.set_status(Status(StatusCode.ERROR, str(summary["error_code"])))
        self.observer.end_run(self.trace_id)

    def pause(self, exc: GraphInterrupt) -> None:
        """Log and record that the run waits for a person; close its spans.

        The event names what is awaited (the question's call id, the tools awaiting approval)
        but never a call's arguments. A resume opens a new run span in the same trace.
        """
        try:
            requests = [
                _awaited(getattr(i, "value", None)) for i in (exc.args[0] if exc.args else ())
            ]
            kinds = ", ".join(str(r.get("type")) for r in requests) or "input"
            self.log(
                logging.INFO,
                "run paused at %s: waiting for %s",
                self.name,
                kinds,
                event="agent.paused",
            )
            self.emit(
                "agent.paused",
                step=self.step,
                status="paused",
                data={"node": self.name, "requests": requests},
            )
            self.run.span.set_attribute("noema.paused", True)
        finally:
            self.span.end()
            self.observer.end_run(self.trace_id)

    def fail(self, exc: BaseException) -> None:
        """Log, record and trace the exception that ends the run; close the spans."""
        try:
            code = type(exc).__name__
            self.log(
                logging.ERROR,
                "node %s failed: %s: %s",
                self.name,
                code,
                _short(str(exc)),
                exc_info=exc,
                event="agent.failed",
                error_code=code,
            )
            self.emit("agent.failed", step=self.step, status="error", data={"error": code})
            self.observer.metrics.record_run(
                self.info.agent,
                success=False,
                duration_ms=(time.monotonic() - self.run.started) * 1000,
                iterations=0,
                cost_usd=None,
                tokens=0,
                error_code=code,
            )
            fail_span(self.span, exc)
            fail_span(self.run.span, exc)
        finally:
            self.span.end()
            self.observer.end_run(self.trace_id)
