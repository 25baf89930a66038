"""The answer prompt shows only the tool-result fields an agent declares (``answer_fields``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from noema_graph.agents import schemas
from noema_graph.agents.catalog import DEFINITIONS
from noema_graph.agents.definition import AgentDefinition
from noema_graph.errors import ConfigurationError
from noema_graph.nodes.answer_fields import field_problem, shown_fields
from noema_graph.nodes.finalize import observations_text
from noema_graph.state.models import ReasoningStep, ToolAction

REVIEWS = [
    {"id": 9, "card_id": 4, "rating": 1, "reviewed_at": "2025-01-02T00:00:00Z"},
    {"id": 8, "card_id": 5, "rating": 3, "reviewed_at": "2025-01-01T00:00:00Z"},
]
HISTORY = {"reviews": REVIEWS, "total": 2}


def _step(tool: str, data: dict[str, Any], *, cut: bool = False) -> ReasoningStep:
    output = {"status": "success", "data": data}
    text = json.dumps(output, separators=(",", ":"))
    return ReasoningStep(
        kind="tool",
        thought="",
        action=ToolAction(tool=tool, input={}, output=output),
        observation=text[:40] if cut else text,  # a long result's preview is cut
        status="ok",
    )


def test_shown_fields_keeps_the_named_paths_through_lists_in_order() -> None:
    assert shown_fields(HISTORY, ["reviews.rating", "total"]) == {
        "reviews": [{"rating": 1}, {"rating": 3}],
        "total": 2,
    }
    assert shown_fields(HISTORY, ["reviews"]) == {"reviews": HISTORY["reviews"]}
    assert shown_fields(HISTORY, ["missing.field"]) == {}


def test_the_answer_prompt_shows_declared_fields_from_the_full_output() -> None:
    trace = [
        _step("learning_stats", {"retention": 0.8, "due_now": 3}),
        _step("hist", HISTORY, cut=True),
    ]
    text = observations_text(trace, {"hist": ("reviews.rating",)})
    assert 'Observation: {"reviews":[{"rating":1},{"rating":3}]}' in text
    assert 'Observation: {"retention":0.8,"due_now":3}' in text  # undeclared: whole result
    assert "reviewed_at" not in text


def test_a_tool_declared_with_no_fields_is_left_out_of_the_answer_prompt() -> None:
    trace = [_step("learning_stats", {"retention": 0.8}), _step("hist", HISTORY)]
    text = observations_text(trace, {"hist": ()})
    assert "hist" not in text
    assert "learning_stats" in text


def _definition(**fields: Any) -> AgentDefinition:
    return AgentDefinition(
        name="probe",
        description="A probe.",
        prompt="probe",
        tools=("learning_stats",),
        output_schema=schemas.Diagnosis,
        answer_choices={"patterns": "learning_stats:", "weak_areas": "learning_stats:"},
        **fields,
    )


def test_answer_fields_name_the_agents_own_tools_and_field_paths() -> None:
    with pytest.raises(ConfigurationError, match="answer_fields") as caught:
        _definition(answer_fields={"get_card": ["back"]})
    assert "get_card" in str(caught.value)
    with pytest.raises(ConfigurationError, match="dotted field path"):
        _definition(answer_fields={"learning_stats": ["reviews..rating"]})
    assert field_problem("reviews.rating") is None
    config = _definition(answer_fields={"learning_stats": ["retention"]}).to_config("x")
    assert config.answer_fields == {"learning_stats": ("retention",)}


def test_every_catalog_declaration_reaches_its_agents_config() -> None:
    for definition in DEFINITIONS:
        config = definition.to_config("x")
        assert config.answer_fields == definition.answer_fields


def test_answer_rows_keep_the_first_entries_of_each_list() -> None:
    assert shown_fields(HISTORY, ["reviews.rating"], 1) == {"reviews": [{"rating": 1}]}
    assert shown_fields(HISTORY, None, 1) == {"reviews": REVIEWS[:1], "total": 2}
    trace = [_step("hist", HISTORY, cut=True), _step("learning_stats", {"retention": 0.8})]
    text = observations_text(trace, {}, {"hist": 1})  # rows without fields: every field
    assert '"id":9' in text and '"id":8' not in text and '"total":2' in text
    assert 'Observation: {"retention":0.8}' in text


def test_answer_rows_name_the_agents_own_tools_and_a_positive_count() -> None:
    with pytest.raises(ConfigurationError, match="answer_rows") as caught:
        _definition(answer_rows={"get_card": 3})
    assert "get_card" in str(caught.value)
    with pytest.raises(ConfigurationError, match="answer_rows"):
        _definition(answer_rows={"learning_stats": 0})
    config = _definition(answer_rows={"learning_stats": 3}).to_config("x")
    assert config.answer_rows == {"learning_stats": 3}
    for definition in DEFINITIONS:
        assert definition.to_config("x").answer_rows == definition.answer_rows
