"""Clarify and confirm from the CLI (prompt, --yes, resume) and from the facade."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from noema_graph import resume_agent, run_agent
from noema_graph.errors import HumanInputError
from noema_graph.noema import DemoSummary
from tests.scripted import call, plan_reply, structured, text, tools_reply

REPORT = {
    "flagged": [{"card_id": 1, "issue": "other", "severity": "low"}],
    "cards_scanned": 2,
    "summary": "One card flagged.",
}


def _flags(db: Path) -> set[int]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT card_id FROM card_flags")}


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, demo: DemoSummary) -> Any:
    from noema_graph.cli import app as cli_module

    monkeypatch.chdir(tmp_path)
    models: list[Any] = []
    options = cli_module.CliOptions(model_factory=lambda spec: models.pop(0))
    before = _flags(demo.path)
    assert not before & {1, 2, 3}  # the cards these tests flag start unflagged

    def invoke(*args: str, input: str = "") -> Any:
        return CliRunner().invoke(
            cli_module.app,
            [*args, "--data", str(demo.path)] if args[0] == "run" else [*args],
            input=input,
            obj=options,
        )

    return invoke, models, before


def _two_flags() -> list[Any]:
    return [
        plan_reply("Flag two cards"),
        tools_reply(
            call("flag_card", {"card_id": 1, "reason": "vague"}, "f1"),
            call("flag_card", {"card_id": 2, "reason": "vague"}, "f2"),
        ),
    ]


def _finish(card_id: int = 1) -> list[Any]:
    # the report may only cite a card a tool result names (finalize grounds the ids)
    flagged = [{**REPORT["flagged"][0], "card_id": card_id}]
    return [text("flagged"), structured("GovernanceReport", **{**REPORT, "flagged": flagged})]


def test_cli_asks_for_each_call_and_routes_the_answers(
    cli: Any, scripted: Any, demo: DemoSummary
) -> None:
    invoke, models, before = cli
    models.append(scripted(*_two_flags(), *_finish()))
    result = invoke(
        "run",
        "governance",
        "Flag cards 1 and 2",
        "--confirm",
        "flag_card",
        "--json",
        input="a\nr\nnot this one\n",
    )
    assert result.exit_code == 0, result.output
    assert "approve? flag_card" in result.output
    assert _flags(demo.path) - before == {1}
    steps = json.loads(result.stdout)["reasoning"]["steps"]
    decisions = [s["observation"] for s in steps if s["kind"] == "approval"]
    assert decisions == ["approved by the user", "rejected by the user: not this one"]


def test_cli_pauses_without_an_answer_and_resume_asks_again(
    cli: Any, scripted: Any, demo: DemoSummary, tmp_path: Path
) -> None:
    invoke, models, before = cli
    models.append(scripted(*_two_flags()))
    request = "Flag card 1 and card 2"  # the ids the calls use (others would be refused)
    paused = invoke("run", "governance", request, "--confirm", "flag_card", "--thread", "t9")
    assert paused.exit_code == 3 and "noema-graph resume t9" in paused.output
    assert _flags(demo.path) == before  # nothing ran while waiting

    models.append(scripted(*_finish()))  # a new graph, built from the thread's recipe
    resumed = invoke("resume", "t9", "--yes", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert "approved (--yes): flag_card" in resumed.output
    assert _flags(demo.path) - before == {1, 2}
    assert json.loads(resumed.stdout)["metadata"]["agent_name"] == "governance"


def test_cli_clarify_question_is_asked_at_the_prompt(cli: Any, scripted: Any) -> None:
    invoke, models, _ = cli
    model = scripted(
        plan_reply("Ask"),
        tools_reply(call("ask_user", {"question": "Which language?"}, "q1")),
        text("You chose Welsh."),
    )
    models.append(model)
    result = invoke("run", "Teach me words", "--clarify", input="Welsh\n")
    assert result.exit_code == 0, result.output
    assert "question Which language?" in result.output and "You chose Welsh." in result.stdout
    assert "Welsh" in str(model.prompts[-1][-1].content)


def test_cli_edit_asks_again_until_the_json_is_valid(
    cli: Any, scripted: Any, demo: DemoSummary
) -> None:
    invoke, models, before = cli
    models.append(
        scripted(
            plan_reply("Flag"),
            tools_reply(call("flag_card", {"card_id": 1, "reason": "vague"}, "f1")),
            *_finish(card_id=3),  # the card the edit flagged
        )
    )
    result = invoke(
        "run",
        "governance",
        "Flag card 3",  # the card the edit flags (another would be refused)
        "--confirm",
        "flag_card",
        input='e\n{not json\ne\n{"card_id": 3, "reason": "edited"}\n',
    )
    assert result.exit_code == 0, result.output
    assert "not JSON" in result.output
    assert _flags(demo.path) - before == {3}


def test_facade_returns_a_paused_output_and_resume_agent_finishes(
    scripted: Any, demo: DemoSummary
) -> None:
    from noema_graph.agents import default_registry

    registry = default_registry()
    definition = registry.get("governance")
    registry.unregister("governance")
    registry.register(definition.model_copy(update={"confirm_tools": ("flag_card",)}))
    try:
        model = scripted(*_two_flags(), *_finish())
        out = run_agent(
            "governance", "Flag card 1 and card 2", user_id="ada", model=model, db=demo.path
        )
        assert not out.success and out.outcome == "confirm" and out.result is None
        [request] = out.interrupts
        assert [c["id"] for c in request["calls"]] == ["f1", "f2"]
        thread = request["thread_id"]
        with pytest.raises(HumanInputError, match=r"resume\['f3'\]"):
            resume_agent(
                "governance", thread, {"f3": "approve"}, user_id="ada", model=model, db=demo.path
            )
        done = resume_agent(
            "governance",
            thread,
            {"f1": "approve", "f2": "reject"},
            user_id="ada",
            model=model,
            db=demo.path,
        )
        assert done.success and done.outcome == "success" and done.interrupts == []
        assert _flags(demo.path) & {1, 2} == {1}
    finally:
        registry.unregister("governance")
        registry.register(definition)


def test_hooks_declared_in_an_agent_definition_run(scripted: Any, demo: DemoSummary) -> None:
    from noema_graph import HookCall, Hooks
    from noema_graph.agents import build_agent, default_registry

    def shorten(call: HookCall, update: dict[str, Any]) -> dict[str, Any]:
        output = update["output"]
        result = {**output["result"], "summary": "[reviewed]"}
        return {**update, "output": {**output, "result": result}}

    definition = (
        default_registry()
        .get("governance")
        .model_copy(update={"hooks": Hooks(post_process={"agent": (shorten,)})})
    )
    model = scripted(
        plan_reply("Scan"),
        tools_reply(call("flag_quality_issues", {})),  # an answer needs a tool result
        text("nothing to flag"),
        structured("GovernanceReport", flagged=[], cards_scanned=0, summary="All fine."),
    )
    graph = build_agent(definition, model=model, db=demo.path)
    out = graph.invoke({"messages": [("user", "Check all my cards for quality problems.")]})[
        "output"
    ]
    assert out["success"] and out["result"]["summary"] == "[reviewed]"


def test_a_subagent_never_pauses_for_the_user(scripted: Any, demo: DemoSummary) -> None:
    from noema_graph.agents import build_agent
    from noema_graph.context import RunContext
    from tests.agents.conftest import PRICES, tutor_consults_calibration

    model = scripted(*tutor_consults_calibration())
    overrides = {**PRICES, "clarify": True, "confirm_non_idempotent": True}
    graph = build_agent("socratic_tutor", model=model, db=demo.path, overrides=overrides)
    out = graph.invoke({"messages": [("user", "Quiz me.")]}, context=RunContext(user_id="ada"))[
        "output"
    ]
    assert out["success"]
    parent = next(n for n in model.bound_tool_names if "consult_calibration" in n)
    child = next(n for n in model.bound_tool_names if "compute_calibration" in n)
    assert "ask_user" in parent and "ask_user" not in child
