"""Structured logging: run fields on every record, a JSON formatter, secret scrubbing.

While a node runs, :func:`log_fields` holds the run's agent name and version, user id,
correlation id, trace id and step number in a context variable; :class:`RunContextFilter`
copies them onto every record (the package's own and any library's logged in that node).
Records logged by the instrumentation also carry them explicitly as ``extra``.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO

from noema_graph.observability.redact import scrub

RUN_FIELDS: tuple[str, ...] = (
    "agent_name",
    "agent_version",
    "user_id",
    "correlation_id",
    "trace_id",
    "run_id",
    "thread_id",
    "session_id",
    "node",
    "step",
)
"""Fields every record logged during a run carries (None outside a run)."""
EVENT_FIELDS: tuple[str, ...] = (
    "event",
    "tool",
    "call_id",
    "status",
    "duration_ms",
    "kind",
    "success",
    "error_code",
    "total_tokens",
    "cost_usd",
    "execution_time_ms",
    "iterations",
)
_FIELDS: ContextVar[Mapping[str, object] | None] = ContextVar("noema_log_fields", default=None)
_HANDLER_NAME = "noema_graph.observability"


def current_fields() -> Mapping[str, object]:
    """Return the run fields of the node in progress (empty outside a run)."""
    return _FIELDS.get() or {}


@contextmanager
def log_fields(fields: Mapping[str, object]) -> Generator[Mapping[str, object]]:
    """Make ``fields`` the run fields of every record logged inside the block."""
    token = _FIELDS.set(fields)
    try:
        yield fields
    finally:
        _FIELDS.reset(token)


class RunContextFilter(logging.Filter):
    """Copy the current run fields onto each record; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Set every missing run field (None outside a run)."""
        fields = current_fields()
        for name in RUN_FIELDS:
            if not hasattr(record, name):
                setattr(record, name, fields.get(name))
        return True


class RedactingFilter(logging.Filter):
    """Scrub secrets from the rendered message; arguments are folded into it first."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Render ``record.msg % args`` once, then mask secrets in it."""
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        record.msg, record.args = scrub(message), None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, run and event fields."""

    def format(self, record: logging.LogRecord) -> str:
        """Return ``record`` as a JSON line."""
        payload: dict[str, object] = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in (*RUN_FIELDS, *EVENT_FIELDS):
            value = getattr(record, name, None)
            if value is not None:
                payload[name] = value
        if record.exc_info:
            payload["exception"] = scrub(self.formatException(record.exc_info))
        return json.dumps(payload, default=str)


class TextFormatter(logging.Formatter):
    """Plain text with the trace id and step appended when the record has them."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the usual line plus ``[trace=... step=...]``."""
        line = super().format(record)
        trace_id = getattr(record, "trace_id", None)
        if trace_id:
            line += f" [agent={getattr(record, 'agent_name', None)} trace={trace_id}"
            line += f" step={getattr(record, 'step', None)}]"
        return line


def configure_logging(
    json: bool = False,
    *,
    level: int | str | None = None,
    stream: IO[str] | None = None,
) -> logging.Handler:
    """Send log records to ``stream`` (stderr) as JSON lines or text, with run fields.

    Installs one handler on the root logger (replacing the one a previous call installed)
    with :class:`RunContextFilter` and :class:`RedactingFilter`. The level defaults to INFO
    for JSON and WARNING for text. Returns the handler.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(RunContextFilter())
    handler.addFilter(RedactingFilter())
    handler.setFormatter(
        JsonFormatter()
        if json
        else TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root.addHandler(handler)
    chosen = level if level is not None else (logging.INFO if json else logging.WARNING)
    root.setLevel(chosen)
    return handler
