"""The read-only answer of an agent that can write (issue 33): data only, in one turn.

A question to a writer reads the records it names, leaves every field that only a write
tool fills empty (or fills it from what a read tool returned), and has the model write the
rest: scripted models on the demo store; the intent tests use the shipped e5 model, with
phrasings written for this file (not the task sets' items).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.agents.intent import classifier_for, polite_request
from noema_graph.agents.schemas import GeneratedCards, GovernanceReport, TaxonomyReport
from noema_graph.grounding.answers import unwritten_fields
from noema_graph.noema import DemoSummary
from tests.scripted import call, structured, tools_reply

Run = Callable[..., dict[str, Any]]
SMALL = {"metadata": {"noema_plans": False}}
"""A scripted model whose profile says it does not plan (like the embedded one)."""


def _tools(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    steps = state["output"]["reasoning"]["steps"]
    return [(s["action"]["tool"], s["action"]["input"]) for s in steps if s["kind"] == "tool"]


def _rows(path: str) -> tuple[Any, ...]:
    query = (
        "SELECT (SELECT group_concat(id || ':' || coalesce(category_id, ''), ',') FROM cards),"
        " (SELECT count(*) FROM concept_links), (SELECT count(*) FROM card_flags)"
    )
    with sqlite3.connect(path) as conn:
        return tuple(conn.execute(query).fetchone())


def _answer_fields(model: Any) -> set[str]:
    """Return the fields of the answer schema the model was asked for (its last binding)."""
    return set(model.bound_schemas[-1]["parameters"]["properties"])


def test_a_question_reads_the_named_card_and_its_answer_validates_with_data_only(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _rows(demo.path)
    model = scripted(
        structured("TaxonomyReport", suggestions=[], summary="Card 30 sits in category 3."),
        **SMALL,
    )
    request = "Is card 30 filed in a sensible category? Leave everything as it is."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    out = state["output"]
    assert state["reading"].intent == "question"
    assert out["success"] and out["validated"], out
    # the named card is read first, then the plan's read step; no write is attempted
    assert _tools(state) == [("get_card", {"card_id": 30}), ("list_categories", {})]
    # the moves only move_card reports are not the model's to write: empty, no change made
    assert "moves" not in _answer_fields(model)
    assert out["result"]["moves"] == []
    assert len(model.prompts) == 1  # the answer only
    assert _rows(demo.path) == before


def test_a_question_to_a_writer_reports_no_created_cards(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _rows(demo.path)
    model = scripted(
        tools_reply(call("search_cards", {"query": "boiling point water"})),
        structured("GeneratedCards", summary="No card matches."),
        **SMALL,
    )
    request = "Do I already have a card about the boiling point of water? Don't add any."
    state = run_agent_graph("content_generation", model, demo.path, request)
    out = state["output"]
    assert state["reading"].intent == "question"
    assert out["success"] and out["validated"], out
    assert [t for t, _ in _tools(state)] == ["search_cards"]
    assert out["result"]["deck_id"] == 0 and out["result"]["card_ids"] == []
    assert {"deck_id", "card_ids"}.isdisjoint(_answer_fields(model))
    assert _rows(demo.path) == before


def test_a_question_reports_the_links_the_graph_holds_not_new_ones(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _rows(demo.path)
    model = scripted(structured("ConceptLinks", summary="They are linked."), **SMALL)
    request = "How is Halogens related to other concepts? I am only asking."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    out = state["output"]
    assert out["success"] and out["validated"], out
    graph = [
        s
        for s in out["reasoning"]["steps"]
        if s["kind"] == "tool" and s["action"]["tool"] == "get_concept_graph"
    ]
    assert graph, _tools(state)
    held = graph[-1]["action"]["output"]["data"]["links"]
    assert out["result"]["links"] == [
        {"source": x["source"], "target": x["target"], "kind": x["kind"]} for x in held
    ]
    assert "links" not in _answer_fields(model)
    assert _rows(demo.path) == before


def test_unwritten_fields_are_the_empty_value_each_type_admits() -> None:
    taxonomy = {"moves": "*move_card:args{card_id,category_id}"}
    assert unwritten_fields(taxonomy, TaxonomyReport, {"move_card"}, []) == {"moves": []}
    # a tool the run may call leaves the field to the run
    assert unwritten_fields(taxonomy, TaxonomyReport, set(), []) == {}
    cards = {"deck_id": "create_cards:args.deck_id", "card_ids": "create_cards:card_ids"}
    assert unwritten_fields(cards, GeneratedCards, {"create_cards"}, []) == {
        "deck_id": 0,
        "card_ids": [],
    }
    flags = {"flagged": "*flag_card:{card_id,issue=reason,severity}"}
    assert unwritten_fields(flags, GovernanceReport, {"flag_card"}, []) == {"flagged": []}


@pytest.mark.parametrize(
    ("text", "polite"),
    [
        ("Could you put card 3 under History?", True),
        ("My Physics deck lacks a card on friction. Can you add one?", True),
        ("Would you mind linking Acids to Bases?", True),
        ("Pourriez-vous déplacer la carte 4 dans Histoire ?", True),
        ("¿Podrías crear una tarjeta sobre los volcanes?", True),
        ("Could you tell me where card 3 is?", False),
        ("Would you mind checking card 4?", False),
        ("Peux-tu me dire où se trouve la carte 3 ?", False),
        ("¿Puedes decirme qué tarjetas hay?", False),
        ("Is card 3 in the right place?", False),
    ],
)
def test_a_polite_request_for_an_action_is_told_from_a_request_to_tell(
    text: str, polite: bool
) -> None:
    assert polite_request(text) is polite


@pytest.mark.parametrize(
    ("agent", "text", "label"),
    [
        (
            "content_generation",
            "Deck 2 has nothing on tides yet. Could you add one card?",
            "create_cards",
        ),
        (
            "content_generation",
            "¿Podrías escribir una tarjeta sobre los planetas en el mazo 2?",
            "create_cards",
        ),
        ("taxonomy_curator", "Pourriez-vous ranger la carte 50 dans Chimie ?", "move_card"),
        ("taxonomy_curator", "Could you tell me which category card 30 is in?", "question"),
        ("taxonomy_curator", "Is card 40 filed right?", "question"),
        ("knowledge_graph", "Which concepts are linked to Acids?", "question"),
    ],
)
def test_an_indirect_request_asks_for_the_change_and_a_question_stays_one(
    agent: str, text: str, label: str
) -> None:
    classifier = classifier_for(agent)
    if classifier is None:
        pytest.skip("the e5 embedding model is not installed")
    assert classifier.decide(text).label == label


def test_a_new_card_offers_no_category_or_kind_the_request_does_not_give() -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from noema_graph.grounding.arguments import step_arguments
    from noema_graph.grounding.seen import seen_in
    from noema_graph.noema.ops.cards import CreateCardsInput

    schema = convert_to_openai_tool(CreateCardsInput)["function"]["parameters"]

    def offered(request: str) -> set[str]:
        narrowed = step_arguments(schema, request, seen_in(request)).schema
        return set(narrowed["properties"]["cards"]["items"]["properties"])

    plain = offered("Add a card on tides to deck 2.")
    assert plain == {"front", "back"}
    assert {"kind", "category_id"} <= offered("Add a cloze card on tides to deck 2, category 8.")
