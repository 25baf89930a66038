"""OpenTelemetry spans: the run's trace id, and model and tool spans from LangChain callbacks.

A noema trace id that is 32 hex digits *is* the OpenTelemetry trace id of the run's spans;
any other id is hashed to one, and every span carries the original as ``noema.trace_id``.
Model and tool spans come from :class:`OtelCallbackHandler`, attached to the compiled graph
next to whatever callbacks the caller (or LangSmith, through its environment variables) adds.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import (
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    Tracer,
    TracerProvider,
)

from noema_graph.context import current_scope
from noema_graph.models.normalize import normalize_usage

logger = logging.getLogger(__name__)

TRACER_NAME = "noema_graph"
CostFn = Callable[[int, int], float | None]


def get_tracer(provider: TracerProvider | None = None) -> Tracer:
    """Return the package's tracer from ``provider`` or the global provider."""
    return (provider or trace.get_tracer_provider()).get_tracer(TRACER_NAME)


def otel_trace_id(trace_id: str) -> int:
    """Return the OpenTelemetry trace id for a noema trace id (itself when 32 hex digits)."""
    try:
        value = int(trace_id, 16) if len(trace_id) == 32 else 0
    except ValueError:
        value = 0
    if value:
        return value
    return int(hashlib.sha256(trace_id.encode()).hexdigest()[:32], 16) or 1


def active_trace_id() -> str | None:
    """Return the trace id of the caller's active OpenTelemetry span, if one is recording."""
    span_context = trace.get_current_span().get_span_context()
    return f"{span_context.trace_id:032x}" if span_context.is_valid else None


def parent_context(trace_id: str) -> otel_context.Context:
    """Return the context a run's span starts in.

    The caller's active span when it belongs to the same trace (distributed tracing), else a
    remote parent carrying ``trace_id`` so the run's spans share the noema trace id.
    """
    current = trace.get_current_span().get_span_context()
    wanted = otel_trace_id(trace_id)
    if current.is_valid and current.trace_id == wanted:
        return otel_context.get_current()
    remote = SpanContext(
        trace_id=wanted,
        span_id=random.getrandbits(64) or 1,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(NonRecordingSpan(remote))


def fail_span(span: Span, exc: BaseException) -> None:
    """Mark ``span`` failed by ``exc``."""
    span.record_exception(exc)
    span.set_status(Status(StatusCode.ERROR, type(exc).__name__))


_OPEN: dict[UUID, Span] = {}
_OPEN_LOCK = threading.Lock()


def _usage(response: LLMResult) -> tuple[int, int, str | None]:
    """Return (input tokens, output tokens, response model) of a chat response."""
    prompt = completion = 0
    model: str | None = None
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration):
                raw = getattr(generation.message, "usage_metadata", None)
                meta = normalize_usage(raw)[0] or {}  # a model's garbage never breaks a span
                prompt += int(meta.get("input_tokens", 0))
                completion += int(meta.get("output_tokens", 0))
                metadata = getattr(generation.message, "response_metadata", None)  # may be any
                named = metadata.get("model_name") if isinstance(metadata, Mapping) else None
                model = model or (str(named) if named is not None else None)
    return prompt, completion, model


class OtelCallbackHandler(BaseCallbackHandler):
    """Open a span per model call and per tool call, as children of the current span.

    A nested graph inherits its parent's handlers, so several handlers may see the same
    LangChain run; spans are kept in one table by run id and only the first handler to see
    a run opens its span. Handler errors are logged by LangChain, never raised.
    """

    run_inline = True

    def __init__(self, tracer: Tracer, *, agent: str, cost: CostFn | None = None) -> None:
        """Use ``tracer``; ``cost`` prices (input, output) tokens for the model spans."""
        self.tracer = tracer
        self.agent = agent
        self.cost = cost

    def _open(self, run_id: UUID, name: str, kind: SpanKind, attrs: dict[str, str | int]) -> None:
        with _OPEN_LOCK:
            if run_id in _OPEN:
                return
            _OPEN[run_id] = self.tracer.start_span(
                name, kind=kind, attributes={"noema.agent": self.agent, **attrs}
            )

    @staticmethod
    def _close(run_id: UUID) -> Span | None:
        with _OPEN_LOCK:
            return _OPEN.pop(run_id, None)

    def on_chat_model_start(
        self,
        serialized: dict[str, object],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, object] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open the model call's span."""
        meta = metadata or {}
        params = kwargs.get("invocation_params") or {}
        model = str(meta.get("ls_model_name") or params.get("model") or "unknown")
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.system": str(meta.get("ls_provider") or "unknown"),
            "noema.node": str(meta.get("langgraph_node") or ""),
            "noema.prompt_messages": sum(len(m) for m in messages),
        }
        self._open(run_id, f"chat {model}", SpanKind.CLIENT, attrs)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: object) -> None:
        """Close the model call's span with tokens and cost."""
        span = self._close(run_id)
        if span is None:
            return
        prompt, completion, model = _usage(response)
        span.set_attribute("gen_ai.usage.input_tokens", prompt)
        span.set_attribute("gen_ai.usage.output_tokens", completion)
        if model:
            span.set_attribute("gen_ai.response.model", model)
        cost = self.cost(prompt, completion) if self.cost else None
        if cost is not None:
            span.set_attribute("noema.cost_usd", cost)
        span.end()

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        """Close the model call's span as failed."""
        if (span := self._close(run_id)) is not None:
            fail_span(span, error)
            span.end()

    def on_tool_start(
        self,
        serialized: dict[str, object],
        input_str: str,
        *,
        run_id: UUID,
        metadata: dict[str, object] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open the tool call's span (inputs stay out: they may hold secrets)."""
        name = str(serialized.get("name") or kwargs.get("name") or "tool")
        attrs: dict[str, str | int] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
        }
        call_id = (kwargs.get("inputs") or {}).get("id") if kwargs.get("inputs") else None
        if call_id:
            attrs["gen_ai.tool.call.id"] = str(call_id)
        self._open(run_id, f"execute_tool {name}", SpanKind.INTERNAL, attrs)

    def on_tool_end(self, output: object, *, run_id: UUID, **kwargs: object) -> None:
        """Close the tool call's span; a ToolMessage with status error marks it failed."""
        if (span := self._close(run_id)) is None:
            return
        if isinstance(output, ToolMessage):
            span.set_attribute("gen_ai.tool.call.id", output.tool_call_id)
            span.set_attribute("noema.tool.status", output.status)
            if output.status == "error":
                span.set_status(Status(StatusCode.ERROR, "tool returned an error"))
        span.end()

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: object) -> None:
        """Close the tool call's span as failed."""
        if (span := self._close(run_id)) is not None:
            fail_span(span, error)
            span.end()


def propagation_meta() -> dict[str, str]:
    """Return W3C trace context and the noema trace id, for an outgoing call's metadata.

    :class:`~noema_graph.tools.MCPToolProvider` sends it as the ``_meta`` of every MCP
    ``tools/call`` request; other cross-process calls made during a tool call can use it too.
    Call it in the caller's context: it reads context variables, which do not follow a
    coroutine handed to another thread's event loop.
    """
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    scope = current_scope()
    if scope is not None:
        carrier["noema.trace_id"] = scope.trace_id
        carrier["noema.run_id"] = scope.run_id
    return carrier
