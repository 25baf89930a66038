"""Words from the data, end to end with the scripted model over the demo store.

A list field cannot hold a value absent from the tool data, the schema sent to the model
carries the data's values as an enum, the answer of a card the run read is masked in every
text of the tutor's turn, and a bad declaration fails at import naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.agents import AgentDefinition, default_registry, schemas
from noema_graph.errors import ConfigurationError
from noema_graph.grounding.words import find_whole
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.state.output import AgentOutput
from tests.scripted import call, plan_reply, reflection_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]

NOTE = "Chlorophyll absorbs red and blue light. Plants turn light into sugar."


def _checks(state: dict[str, Any]) -> list[str]:
    steps = state["output"]["reasoning"]["steps"]
    return [s["thought"] for s in steps if s["thought"].startswith("Answer check:")]


def _bound(model: Any, name: str) -> dict[str, Any]:
    return next(s for s in reversed(model.bound_schemas) if s["name"] == name)


def test_a_list_field_holds_only_values_of_the_tool_data(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    source_id = demo.source_id + 1
    model = scripted(
        plan_reply("Ingest", "Read back"),
        tools_reply(call("ingest_text", {"title": "Photosynthesis", "text": NOTE})),
        text("stored"),
        tools_reply(call("get_chunks", {"source_id": source_id})),
        reflection_reply("continue"),
        text("read back"),
        structured(
            "IngestionReport",
            source_id=source_id,
            chunk_count=1,
            # a worked example's concept, one the model made up, and two of the note's own
            key_concepts=["Glaciers", "Photosynthesis", "Osmosis", "chlorophyll"],
            summary="How plants make sugar.",
        ),
    )
    state = run_agent_graph("ingestion", model, demo.path, "Ingest my note on photosynthesis.")
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.validated
    assert out.result["key_concepts"] == ["Photosynthesis", "Chlorophyll"]
    assert _checks(state) == [
        "Answer check: key_concepts: left out ['Glaciers', 'Osmosis'], not among the values "
        "the data offers"
    ]
    # the schema the model wrote was offered the note's title and terms, nothing else
    offered = _bound(model, "IngestionReport")["parameters"]["properties"]["key_concepts"]
    enum = offered["items"]["enum"]
    assert enum[:2] == ["Photosynthesis", "Chlorophyll"] and "white light" not in enum
    assert "blue light" in enum and "Glaciers" not in enum and "Erosion" not in enum


def test_the_tutor_never_shows_the_answer_of_the_card_it_read(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    with LearningStore.open(demo.path) as store:
        card = store.call("get_card", card_id=5)
    answer = card.back.strip(" .")
    model = scripted(
        plan_reply("Read the card"),
        tools_reply(call("get_card", {"card_id": 5})),
        text("read the card"),
        structured(
            "SocraticTurn",
            question=f"Is it {answer.upper()}?",
            concept=answer,
            hint=f"The answer is {answer.lower()}.",
            understanding="none",
        ),
    )
    state = run_agent_graph(
        "socratic_tutor", model, demo.path, "Help me recall card 5 without the answer."
    )
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.validated
    turn = schemas.SocraticTurn.model_validate(out.result)
    for field in (turn.question, turn.hint, turn.concept):
        assert not find_whole(answer, field), field
    assert turn.question == f"Is it {answer[0].upper()}{'_' * (len(answer) - 1)}?"
    assert turn.concept == ""  # the answer is no concept the card offers
    notes = _checks(state)
    assert len(notes) == 3 and all(answer not in n for n in notes)
    assert any(n.startswith("Answer check: hint: masked") for n in notes)
    # the concepts offered are the card's own, never its answer
    offered = _bound(model, "SocraticTurn")["parameters"]["properties"]["concept"]["enum"]
    assert set(card.concepts) <= set(offered) and answer not in offered


def test_nothing_a_worked_example_states_reaches_the_diagnosis(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    with LearningStore.open(demo.path) as store:
        stats = store.call("learning_stats", user_id=1)
    example = default_registry().get("diagnostic")
    model = scripted(
        plan_reply("Diagnose"),
        tools_reply(
            call("learning_stats", {"user_id": 1}),
            call("get_review_history", {"user_id": 1, "limit": 20}),
        ),
        text("read"),
        # what the embedded model wrote: the worked example's answer, copied
        structured(
            "Diagnosis",
            retention=0.78,
            lapses=23,
            patterns=["reviews cluster on weekends"],
            weak_areas=["Roman numerals"],
            summary="Solid retention, irregular rhythm.",
        ),
    )
    state = run_agent_graph("diagnostic", model, demo.path, "How am I doing?")
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.validated and example.answer_choices
    figures = f"retention {round(stats.retention, 3)}, lapses {stats.lapses}."
    assert out.result["summary"] == figures  # the tools' figures, not the example's words
    assert out.result["patterns"] == [] and out.result["weak_areas"] == []
    assert len(_checks(state)) == 3
    # the answer prompt holds no worked example, so none could be copied
    answer_prompt = " ".join(str(m.content) for m in model.prompts[-1])
    assert "Worked examples" not in answer_prompt and "Roman numerals" not in answer_prompt


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
    ("choices", "named"),
    [
        ({}, "the list fields ['suggestions'] of TaxonomyReport have no choices"),
        ({"suggestionz": "list_categories:"}, "'suggestionz' is not a field"),
        ({"moves": "list_categories:"}, "'moves' is not a text or a list of text"),
        ({"suggestions": "get_card:front"}, "answer_choices.suggestions: 'get_card:front' reads"),
        ({"suggestions": "request"}, "answer_choices.suggestions: 'request': the request is a"),
        ({"suggestions": "terms(list categories)"}, "answer_choices.suggestions: 'list cat"),
    ],
)
def test_a_bad_choices_declaration_fails_at_import_naming_the_field(
    choices: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=r"AgentDefinition\('curator'\)") as caught:
        _definition(answer_choices=choices)
    assert named in str(caught.value)
    assert _definition(answer_choices={"suggestions": "list_categories:categories.*.path"})


def test_every_list_of_text_an_agent_writes_is_chosen_from_its_data() -> None:
    for definition in default_registry().get_all():
        schema = definition.output_schema
        for name, field in schema.model_fields.items():
            if name in definition.answer_sources:
                continue
            annotation = str(field.annotation)
            if annotation.startswith("list[") and "str" in annotation:
                assert name in definition.answer_choices, (definition.name, name)
