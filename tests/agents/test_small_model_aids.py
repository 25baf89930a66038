"""What keeps a small model's answers honest: compact views, offered arguments, grounding."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from noema_graph.agents import default_registry, schemas
from noema_graph.agents.domain_tools import domain_registry, offered_input
from noema_graph.config import AgentConfig
from noema_graph.errors import ConfigurationError
from noema_graph.models.grounding import Observed, grounded_schema, observed
from noema_graph.nodes.execute_step import ANSWER_NOW_NOTE, ANSWER_ONLY_NOTE, answer_only_note
from noema_graph.nodes.finalize import observations_text
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.protocols.react import parse_response
from noema_graph.state.models import ReasoningStep, ToolAction


def _tool_step(tool: str, data: dict[str, Any], status: str = "ok") -> ReasoningStep:
    output = {"status": "success", "data": data} if status == "ok" else {"status": "error"}
    return ReasoningStep(
        kind="tool",
        thought="",
        action=ToolAction(tool=tool, input={}, output=output),
        observation=json.dumps(output, separators=(",", ":")),
        status=status,  # type: ignore[arg-type] -- a str literal of the two statuses
    )


def _invoke(demo: DemoSummary, name: str, args: dict[str, Any]) -> dict[str, Any]:
    [tool] = domain_registry(demo.path, [name]).as_langchain_tools(permissions=("fs:read",))
    return json.loads(tool.invoke(args))["data"]


def test_due_cards_view_is_the_operation_in_short(demo: DemoSummary) -> None:
    view = _invoke(demo, "list_due_cards", {"user_id": 2, "limit": 3})
    with LearningStore.open(demo.path) as store:
        due = store.call("list_due_cards", user_id=2, limit=3)
    assert [c["card_id"] for c in view["cards"]] == [d.card.id for d in due.cards]
    assert [c["expected_recall"] for c in view["cards"]] == [
        round(d.retrievability, 3) for d in due.cards
    ]
    assert view["due_total"] == due.due_total and len(json.dumps(view)) < 600


def test_calibration_view_rounds_the_figures_and_drops_the_bins(demo: DemoSummary) -> None:
    view = _invoke(demo, "compute_calibration", {"user_id": 2})
    with LearningStore.open(demo.path) as store:
        figures = store.call("compute_calibration", user_id=2)
    assert list(view)[:3] == ["brier", "ece", "bias"]  # the answer's order
    assert view["brier"] == round(figures.brier or 0, 3) and "bins" not in view


def test_offered_arguments_hide_the_rest(demo: DemoSummary) -> None:
    model = offered_input("compute_calibration", ("user_id",))
    assert list(model.model_fields) == ["user_id"]
    with pytest.raises(ValidationError):
        model.model_validate({"user_id": 2, "since": ""})
    with pytest.raises(ConfigurationError, match="required arguments"):
        offered_input("compute_calibration", ())
    with pytest.raises(ConfigurationError, match="unknown arguments"):
        offered_input("compute_calibration", ("user_id", "when"))
    definition = default_registry().get("calibration")
    assert definition.tool_arguments == {"compute_calibration": ("user_id",)}


def test_grounded_schema_admits_only_observed_ids_and_list_lengths() -> None:
    trace = [
        _tool_step("flag_quality_issues", {"flagged": [{"card_id": 7}, {"card_id": 9}]}),
        _tool_step("flag_card", {"card_id": 99}, status="error"),  # failed: not evidence
    ]
    seen = observed(trace)
    assert seen == Observed(ids={"card_id": {7, 9}}, list_lengths={"flagged": 2})
    grounded = grounded_schema(schemas.GovernanceReport, seen)
    item = {"issue": "empty_back", "severity": "high"}
    ok = grounded.model_validate(
        {"flagged": [{"card_id": 7, **item}], "cards_scanned": 3, "summary": "s"}
    )
    assert isinstance(ok, schemas.GovernanceReport)
    with pytest.raises(ValidationError):  # an id no tool returned
        grounded.model_validate(
            {"flagged": [{"card_id": 8, **item}], "cards_scanned": 3, "summary": "s"}
        )
    with pytest.raises(ValidationError):  # longer than the observed list
        grounded.model_validate(
            {"flagged": [{"card_id": 7, **item}] * 3, "cards_scanned": 3, "summary": "s"}
        )
    schema = grounded.model_json_schema()
    assert schema["$defs"]["FlaggedCard"]["properties"]["card_id"]["enum"] == [7, 9]
    assert grounded_schema(schemas.CalibrationAdvice, seen) is schemas.CalibrationAdvice


def test_answer_only_after_enough_tool_results() -> None:
    config = AgentConfig(answer_after_tool_results=1)
    failed = {"trace": [_tool_step("t", {}, status="error")]}
    assert answer_only_note(failed, config) is None  # type: ignore[arg-type] -- a plain dict state
    done = {"trace": [_tool_step("t", {"x": 1})]}
    assert answer_only_note(done, config) is ANSWER_NOW_NOTE  # type: ignore[arg-type] -- plain dict
    assert answer_only_note(done, AgentConfig()) is None  # type: ignore[arg-type] -- plain dict
    looping = {"answer_only": True, "trace": []}
    assert answer_only_note(looping, AgentConfig()) is ANSWER_ONLY_NOTE  # type: ignore[arg-type] -- plain dict


def test_finalize_reads_the_real_observations_in_the_examples_layout() -> None:
    text = observations_text([_tool_step("compute_calibration", {"brier": 0.163})])
    assert text == 'Action: compute_calibration {}\nObservation: {"brier":0.163}'
    assert observations_text([_tool_step("t", {}, status="error")]) == "(no tool results)"


def test_an_answer_only_turn_never_becomes_a_call() -> None:
    text = "Thought: done\nFinal Answer: card 5\nAction: list_due_cards\nAction Input: {}"
    assert parse_response(text).tool == "list_due_cards"
    parsed = parse_response(text, actions=False)
    assert parsed.tool is None and parsed.result == "card 5"


def test_finalize_prompt_leaves_the_examples_out() -> None:
    from noema_graph.prompts import EXAMPLES_HEADING, without_examples

    rendered = default_registry().prompts.render_for(default_registry().get("calibration"))
    assert EXAMPLES_HEADING in rendered and "Observation:" in rendered
    assert without_examples(rendered) == rendered.split(EXAMPLES_HEADING)[0].rstrip()
    assert without_examples("no examples here") == "no examples here"


@pytest.mark.parametrize(
    ("observation", "shown"),
    [
        ('{"bias": 0.119, "direction": "over-confident"}', "over-confident"),
        ('{"bias": -0.234, "direction": "under-confident"}', "under-confident"),
        ('{"bias": 0.011, "direction": "well calibrated"}', "well calibrated"),
        ("(no tool results)", "over-confident"),  # nothing alike: the first example
    ],
)
def test_the_answer_prompt_shows_the_example_whose_observation_reads_like_the_run(
    observation: str, shown: str
) -> None:
    from noema_graph.prompts import EXAMPLES_HEADING, nearest_example

    rendered = default_registry().prompts.render_for(default_registry().get("calibration"))
    assert rendered.count("Final answer:") == 3
    kept = nearest_example(rendered, f"Observation: {observation}")
    head, _, example = kept.partition(EXAMPLES_HEADING)
    assert head == rendered.partition(EXAMPLES_HEADING)[0]
    assert example.count("Final answer:") == 1 and example.strip().startswith("Example 1:")
    assert f'"direction": "{shown}"' in example and f"You are {shown}" in example
    assert nearest_example("no examples here", observation) == "no examples here"


def test_a_card_listed_twice_in_a_governance_report_counts_once() -> None:
    first = {"card_id": 205, "issue": "exact_duplicate", "severity": "medium"}
    again = {"card_id": 205, "issue": "empty_back", "severity": "high"}
    other = {"card_id": 202, "issue": "empty_back", "severity": "high"}
    report = schemas.GovernanceReport.model_validate(
        {"flagged": [first, again, other], "cards_scanned": 208, "summary": "s"}
    )
    assert [f.model_dump() for f in report.flagged] == [first, other]
