"""Structured logs: run fields on every record, the JSON formatter, and no secrets."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from langchain_core.tools import StructuredTool, tool

from noema_graph.context import RunContext
from noema_graph.observability import configure_logging, redact_args, scrub
from noema_graph.observability.logs import RUN_FIELDS
from tests.helpers import cfg
from tests.observability.conftest import Telemetry
from tests.scripted import call, plan_reply, text, tools_reply

PASSWORD = "hunter2-very-secret"
API_KEY = "sk-live-abcdefghijklmnop1234"


@tool
def login(username: str, password: str) -> str:
    """Log in."""
    return f"welcome {username}"


def _vault(pin: str) -> str:
    return "opened"


vault = StructuredTool.from_function(
    _vault, name="vault", description="Open the vault.", metadata={"sensitive": True}
)


def _run(telemetry: Telemetry, scripted: Any, **kw: Any) -> Any:
    model = scripted(
        plan_reply("log in"),
        tools_reply(
            call("login", {"username": "ada", "password": PASSWORD}, "c1"),
            call("vault", {"pin": "9876-5432"}, "c2"),
            content="logging in",
        ),
        text("in"),
    )
    return telemetry.run(model, tools=[login, vault], **kw)


def test_every_run_record_carries_the_run_fields(
    telemetry: Telemetry, scripted: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    context = RunContext(user_id="u7", correlation_id="corr-1", trace_id="a" * 32)
    state = _run(telemetry, scripted, context=context)
    assert state["output"]["success"]
    run = [r for r in caplog.records if r.name == "noema_graph.run"]
    messages = [r.getMessage() for r in run]
    assert messages[0].startswith("run started")
    assert messages[-1].startswith("run completed: success=True tokens=45")
    assert any("tool invoked: login" in m for m in messages)
    assert any("thought: logging in | action: login" in m for m in messages)
    for record in run:
        assert record.__dict__["agent_name"] == "noema"
        assert record.__dict__["agent_version"] == "1.0.0"
        assert record.__dict__["user_id"] == "u7"
        assert record.__dict__["correlation_id"] == "corr-1"
        assert record.__dict__["trace_id"] == "a" * 32
        assert isinstance(record.__dict__["step"], int)
    steps = [r.__dict__["step"] for r in run if r.getMessage().startswith("step ")]
    assert sorted(steps) == list(range(1, len(steps) + 1))


def test_secrets_never_reach_a_log_line(
    telemetry: Telemetry,
    scripted: Any,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    stream = io.StringIO()
    handler = configure_logging(json=True, level=logging.DEBUG, stream=stream)
    try:
        _run(telemetry, scripted)
        logging.getLogger("some.library").warning("calling with key %s", API_KEY)
    finally:
        logging.getLogger().removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert len(lines) > 5
    rendered = "\n".join(lines) + "\n".join(
        json.dumps(r.__dict__, default=str) for r in caplog.records if r.name == "noema_graph.run"
    )
    assert PASSWORD not in rendered and "9876-5432" not in rendered
    assert API_KEY not in "\n".join(lines)
    assert "'password': '***'" in rendered and "vault(***)" in rendered
    events = telemetry.events.query(types=["tool.invoked"])
    assert {e.tool: e.data["args"] for e in events} == {
        "login": {"username": "ada", "password": "***"},
        "vault": "***",
    }


def test_json_formatter_writes_run_fields(telemetry: Telemetry, scripted: Any) -> None:
    stream = io.StringIO()
    handler = configure_logging(json=True, stream=stream)
    try:
        telemetry.run(scripted(plan_reply("a"), text("done")), config=cfg())
        logging.getLogger("outside").warning("not in a run")
    finally:
        logging.getLogger().removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    completed = next(line for line in lines if line.get("event") == "agent.completed")
    assert completed["level"] == "INFO" and completed["success"] is True
    assert set(RUN_FIELDS) - {"session_id"} <= set(completed)
    assert completed["total_tokens"] == 30 and completed["iterations"] == 1
    outside = lines[-1]
    assert outside["message"] == "not in a run" and "trace_id" not in outside


def test_text_logging_defaults_to_warnings() -> None:
    stream = io.StringIO()
    handler = configure_logging(stream=stream)
    try:
        logging.getLogger("x").info("hidden")
        logging.getLogger("x").warning("shown token=abcdefgh")
    finally:
        logging.getLogger().removeHandler(handler)
    assert stream.getvalue().strip().endswith("x: shown token=***")


def test_redaction_rules() -> None:
    assert redact_args({"api_key": "k", "nested": [{"Secret": "s"}], "n": 1}) == {
        "api_key": "***",
        "nested": [{"Secret": "***"}],
        "n": 1,
    }
    assert redact_args({"pin": "1"}, ["pin"]) == {"pin": "***"}
    assert scrub("Authorization: Bearer abcdefghijklmnopqrstuvwxyz") == "Authorization: Bearer ***"
    assert scrub("key sk-abcdefghijklmnopqrstu end") == "key *** end"
    assert scrub("password=hunter22 ok") == "password=*** ok"
    assert scrub("tokens=120") == "tokens=120"
