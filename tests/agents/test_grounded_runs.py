"""The small-model mechanisms end to end on the demo store, with a strict scripted model.

Default plans, grounded references, recovery led by the error, answers bound to tool data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.agents import schemas
from noema_graph.agents.definition import AgentDefinition
from noema_graph.agents.learners import Learner
from noema_graph.errors import ConfigurationError
from noema_graph.noema import DemoSummary
from noema_graph.state.output import AgentOutput
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]
BEN = Learner(2, "ben")
SMALL = {"metadata": {"noema_plans": False}}
"""A scripted model whose profile says it does not plan (like the embedded one)."""
BEN_OPENING = "You are over-confident: about 92% confidence against 80% recall"
"""Calibration's advice opening (answer_openings) filled with ben's figures in the demo."""
BEN_ADVICE = f"{BEN_OPENING}, so rate lower."


def _steps(state: dict[str, Any]) -> list[dict[str, Any]]:
    return state["output"]["reasoning"]["steps"]


def _tool_steps(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in _steps(state) if s["kind"] == "tool"]


def test_a_small_model_follows_the_default_plan_and_writes_only_the_words(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    # one model call: the tool step's arguments are all determined (user_id from the
    # run), and brier, ece and bias come from the tool even though the model wrote others
    model = scripted(
        structured("CalibrationAdvice", brier=0.9, ece=0.9, bias=-0.9, advice=BEN_ADVICE),
        **SMALL,
    )
    state = run_agent_graph("calibration", model, demo.path, "Calibrated?", learner=BEN)
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.result["advice"] == BEN_ADVICE  # it starts as it must: kept
    tool = _tool_steps(state)[0]
    figures = tool["action"]["output"]["data"]
    assert {k: out.result[k] for k in ("brier", "ece", "bias")} == {
        k: figures[k] for k in ("brier", "ece", "bias")
    }
    assert tool["action"]["input"] == {"user_id": 2}
    assert _steps(state)[0]["thought"] == "The agent's default plan."
    assert len(model.prompts) == 1  # no planning call, no step turn: the answer only


def test_an_opened_field_starts_with_the_tool_words_whatever_the_model_writes(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        structured("CalibrationAdvice", advice="You are under-confident, so trust yourself."),
        **SMALL,
    )
    state = run_agent_graph("calibration", model, demo.path, "Calibrated?", learner=BEN)
    advice = state["output"]["result"]["advice"]
    assert advice == f"{BEN_OPENING}: You are under-confident, so trust yourself."
    # the model was asked for the advice alone, its text bound to start with the opening
    (answer,) = model.bound_schemas
    assert list(answer["parameters"]["properties"]) == ["advice"]
    pattern = answer["parameters"]["properties"]["advice"]["pattern"]
    assert pattern.startswith(f"^{BEN_OPENING}[")  # no regex special in it
    # the worked example shown is the one whose observation reads like ben's (over-confident)
    system = str(model.prompts[0][0].content)
    assert system.count("Example ") == 1 and '"direction": "over-confident"' in system


def test_a_capable_model_is_shown_the_default_plan_to_refine(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        plan_reply("Measure calibration"),
        tools_reply(call("compute_calibration", {"user_id": 2})),
        text("measured"),
        structured("CalibrationAdvice", brier=0, ece=0, bias=0, advice="Fine."),
    )
    state = run_agent_graph("calibration", model, demo.path, "Calibrated?", learner=BEN)
    assert state["output"]["success"]
    planning = "\n".join(str(m.content) for m in model.prompts[0])
    assert "The agent's default plan (refine it to this request):" in planning
    assert "1. Call compute_calibration." in planning


def test_an_unseen_id_is_refused_with_the_seen_values_before_the_tool_runs(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    def model() -> Any:
        return scripted(
            plan_reply("Move the card"),
            tools_reply(call("move_card", {"card_id": 53, "category_id": 7})),
            tools_reply(call("move_card", {"card_id": 5, "category_id": 7})),
            text("moved"),
            structured("TaxonomyReport", moves=[], suggestions=[], summary="Moved."),
        )

    request = "Move card 5 into the Geography category."
    state = run_agent_graph("taxonomy_curator", model(), demo.path, request)
    first, second = _tool_steps(state)
    # the request's reading refuses it first: the request names card 5 only
    assert first["observation"] == (
        "Not executed: the request does not refer to card 53 (it refers to card: 5)."
    )
    assert second["action"]["output"]["status"] == "success"
    # the moves come from the successful call, not from the model's empty list
    assert state["output"]["result"]["moves"] == [{"card_id": 5, "category_id": 7}]
    # without the reading, the check of what the run has seen refuses it
    unread = run_agent_graph("taxonomy_curator", model(), demo.path, request, read=False)
    first = _tool_steps(unread)[0]
    assert first["observation"].startswith("Invalid argument 'card_id' for tool 'move_card'")
    assert "53 is no card this run has seen (seen: 5)" in first["observation"]


def test_the_fix_an_error_names_becomes_the_next_call(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        plan_reply("Move the card"),
        tools_reply(call("move_card", {"card_id": 5, "category_id": 55})),
        # no reply for the fix: reflect, revise_plan and the list_categories call need none
        tools_reply(call("move_card", {"card_id": 5, "category_id": 7})),
        text("moved"),
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Moved."),
    )
    request = "Move card 5 into the Geography category."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request, read=False)
    kinds = [s["kind"] for s in _steps(state)]
    tools = [s["action"]["tool"] for s in _tool_steps(state)]
    assert tools == ["move_card", "list_categories", "move_card"]
    assert kinds.index("reflection") < kinds.index("plan_revised") < kinds.index("final")
    failed = _tool_steps(state)[0]["action"]["output"]
    assert failed["error"]["fix"] == {"tool": "list_categories", "args": {}}
    assert "no category with id 55" in failed["error"]["message"]  # "categorie" no more
    assert state["output"]["success"]


def test_an_identical_failed_call_is_not_sent_again(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    bad = {"card_id": 999, "reason": "vague"}
    model = scripted(
        plan_reply("Flag it"),
        tools_reply(call("flag_card", bad)),
        tools_reply(call("flag_card", bad)),
    )
    state = run_agent_graph("governance", model, demo.path, "Flag the vague card.", read=False)
    first, second = _tool_steps(state)
    assert first["action"]["output"]["status"] == "error"  # the tool ran and refused it
    assert second["observation"].startswith(
        "Not executed: an identical flag_card call already failed"
    )
    # the loop guard stopped the run, but the learner reads the domain problem
    error = state["output"]["error"]
    assert (error["code"], error["message"]) == ("not_found", "There is no card 999.")
    assert error["details"] == {"stop": "loop_detected"}
    assert state["output"]["metadata"]["stop_reason"] == "loop_detected"
    assert str(state["output"]["result"]).endswith("There is no card 999.")
    assert "Not executed" not in str(state["output"]["result"])


def _definition(**fields: Any) -> AgentDefinition:
    base: dict[str, Any] = {
        "name": "curator",
        "description": "Moves cards.",
        "prompt": "taxonomy_curator",
        "tools": ("list_categories", "move_card"),
        "output_schema": schemas.TaxonomyReport,
    }
    return AgentDefinition(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"plan": [{"tool": "delete_everything"}]}, "plan[0].tool: 'delete_everything'"),
        ({"plan": [{"tool": "move_card", "args": {"deck": 1}}]}, "no arguments ['deck']"),
        ({"answer_sources": {"movez": "*move_card:args"}}, "has no fields ['movez']"),
        ({"answer_sources": {"moves": "*get_card:args"}}, "reads 'get_card'"),
        ({"answer_sources": {"moves": "not a source"}}, "'not a source' is not a source"),
        ({"answer_openings": {"movez": "{move_card:card_id}"}}, "has no fields ['movez']"),
        ({"answer_openings": {"moves": "{move_card:card_id}"}}, "'moves' is not a text field"),
        ({"answer_openings": {"summary": "{get_card:front}"}}, "reads 'get_card'"),
        ({"answer_openings": {"summary": "Moved {card}"}}, "summary: 'Moved {card}' has a brace"),
        ({"answer_openings": {"summary": "Moved."}}, "answer_openings.summary: 'Moved.' has no"),
        (
            {
                "answer_sources": {"summary": "move_card:card_id"},
                "answer_openings": {"summary": "{move_card:card_id}"},
            },
            "'summary' is in answer_sources too",
        ),
    ],
)
def test_a_plan_or_source_naming_an_unknown_tool_or_field_fails_naming_it(
    fields: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=r"AgentDefinition\('curator'\)") as caught:
        _definition(**fields)
    assert named in str(caught.value)
