"""The facade (run_agent, arun_agent, astream_agent), the CLI and the MCP server's domain tools."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from noema_graph import AgentOutput, arun_agent, astream_agent, run_agent
from noema_graph.errors import ConfigurationError
from noema_graph.noema import DemoSummary
from tests.scripted import call, plan_reply, structured, text, tools_reply

CALIBRATION = {"brier": 0.2, "ece": 0.1, "bias": 0.05, "advice": "Good."}
"""What the scripted model writes; brier, ece and bias are then replaced by the tool's."""
CLEO = {
    "brier": 0.176,
    "ece": 0.234,
    "bias": -0.234,
    "advice": "You are under-confident: about 62% confidence against 85% recall: Good.",
}
"""The answer: cleo's figures as compute_calibration gives them (answer_sources), the
model's advice after the opening the figures fill (answer_openings): the scripted model
did not write it, so it is laid before the model's words."""


def _calibration_script() -> list[Any]:
    return [
        plan_reply("Measure"),
        tools_reply(call("compute_calibration", {"user_id": 3})),
        text("measured"),
        structured("CalibrationAdvice", **CALIBRATION),
    ]


def test_run_agent_returns_the_typed_output(scripted: Any, demo: DemoSummary) -> None:
    model = scripted(*_calibration_script())
    out = run_agent("calibration", "Calibrated?", user_id="cleo", model=model, db=demo.path)
    assert isinstance(out, AgentOutput) and out.validated and out.result == CLEO
    assert model.prompts[0][-1].content == "Calibrated?"  # the learner is in the run only
    tool = next(s for s in out.reasoning.steps if s.kind == "tool")
    assert tool.action is not None and tool.action.input == {"user_id": 3}


def test_run_agent_continues_a_thread(scripted: Any, demo: DemoSummary) -> None:
    model = scripted(*_calibration_script(), *_calibration_script())
    run_agent("calibration", "one", user_id="3", model=model, db=demo.path, thread_id="th")
    run_agent("calibration", "two", user_id="3", model=model, db=demo.path, thread_id="th")
    assert any("one" in str(m.content) for m in model.prompts[4])


def test_facade_threads_revive_only_allow_listed_classes(
    scripted: Any, demo: DemoSummary, caplog: pytest.LogCaptureFixture
) -> None:
    model = scripted(*_calibration_script(), *_calibration_script())
    with caplog.at_level(logging.WARNING):
        run_agent("calibration", "one", user_id="3", model=model, db=demo.path, thread_id="a")
        out = run_agent("calibration", "two", user_id="3", model=model, db=demo.path, thread_id="a")
    assert out.validated
    assert not [r for r in caplog.records if "unregistered type" in r.getMessage()]


def test_unknown_learner_or_agent_is_a_configuration_error(
    scripted: Any, demo: DemoSummary
) -> None:
    with pytest.raises(ConfigurationError, match=r"no learner .zed.*ada"):
        run_agent("learning", "x", user_id="zed", model=scripted(), db=demo.path)
    with pytest.raises(ConfigurationError, match="no agent named 'wizard'"):
        run_agent("wizard", "x", user_id="ada", model=scripted(), db=demo.path)


async def test_arun_and_astream(scripted: Any, demo: DemoSummary) -> None:
    out = await arun_agent(
        "calibration", "x", user_id="cleo", model=scripted(*_calibration_script()), db=demo.path
    )
    assert out.validated
    items = [
        item
        async for item in astream_agent(
            "calibration",
            "x",
            user_id="cleo",
            model=scripted(*_calibration_script()),
            db=demo.path,
        )
    ]
    assert isinstance(items[-1], AgentOutput) and items[-1].result == CLEO
    events = [i["type"] for i in items[:-1] if isinstance(i, dict)]
    assert events[0] == "turn_start" and "tool_call_end" in events and events[-1] == "turn_end"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    from noema_graph.cli import app as cli_module

    monkeypatch.chdir(tmp_path)
    models: list[Any] = []
    options = cli_module.CliOptions(model_factory=lambda spec: models.pop(0))

    def invoke(args: list[str], **kwargs: Any) -> Any:
        return CliRunner().invoke(cli_module.app, args, obj=options, **kwargs)

    return invoke, models


def test_cli_demo_data_then_agent_run(cli: Any, scripted: Any, tmp_path: Path) -> None:
    invoke, models = cli
    result = invoke(["demo-data", "--db", "learn.db"])
    assert result.exit_code == 0 and "208 cards" in result.output
    again = invoke(["demo-data", "--db", "learn.db"])
    assert again.exit_code == 2 and "already exists" in again.output
    models.append(scripted(*_calibration_script()))
    result = invoke(
        [
            "run",
            "calibration",
            "Calibrated?",
            "--data",
            "learn.db",
            "--user",
            "cleo",
            "--thread",
            "th1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["result"] == CLEO and payload["metadata"]["agent_name"] == "calibration"


def test_cli_run_writes_the_sample_when_missing(cli: Any, scripted: Any) -> None:
    invoke, models = cli
    models.append(scripted(*_calibration_script()))
    result = invoke(["run", "calibration", "x", "--user", "cleo", "--json"])
    assert result.exit_code == 0, result.output
    assert "had no learning data: wrote the sample" in result.output
    assert Path("noema-learning.sqlite").exists()


def test_cli_plain_run_still_works_and_unknown_agent_fails(cli: Any, scripted: Any) -> None:
    invoke, models = cli
    models.append(scripted(plan_reply("Answer"), text("hello there")))
    result = invoke(["run", "say hello"])
    assert result.exit_code == 0 and "hello there" in result.stdout
    bad = invoke(["run", "wizard", "do magic"])
    assert bad.exit_code == 2 and "not an agent" in bad.output
    listing = invoke(["agents"])
    assert listing.exit_code == 0 and "consult_diagnostic" in listing.stdout


async def test_mcp_server_serves_the_domain_tools(demo: DemoSummary) -> None:
    from noema_graph.agents.mcp_server import build_server
    from noema_graph.config import AgentConfig

    server = build_server(
        AgentConfig(working_directory=Path(demo.path).parent), learning_db=Path(demo.path)
    )
    names = {t.name for t in await server.list_tools()}
    assert {"list_due_cards", "flag_card", "compute_calibration", "bash"} <= names
    (content,) = await server.call_tool("learning_stats", {"user_id": 1})
    assert json.loads(content.text)["data"]["total_reviews"] > 0


def test_run_agent_without_a_learner_names_the_option() -> None:
    with pytest.raises(ConfigurationError, match="user_id"):
        run_agent("learning", "What next?")  # pyright: ignore[reportCallIssue]  # the mistake
