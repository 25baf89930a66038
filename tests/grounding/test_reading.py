"""Reading a request: references in three languages, bound calls, refused writes, bad input."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import StructuredTool

from noema_graph.agents.intent import language_known
from noema_graph.agents.references import (
    destination,
    fold,
    ids_named,
    names_named,
    near,
    slot_names,
)
from noema_graph.grounding.reading import (
    MAX_REQUEST_CHARS,
    bound_calls,
    input_problem,
    offered,
    with_references,
    write_refusal,
)
from noema_graph.grounding.seen import Seen
from noema_graph.state.models import Reference, RequestReading

MOVE = {
    "type": "object",
    "properties": {"card_id": {"type": "integer"}, "category_id": {"type": "integer"}},
    "required": ["card_id", "category_id"],
}
LINK = {
    "type": "object",
    "properties": {
        "source": {"type": "string", "x-noema-ref": "concept"},
        "target": {"type": "string", "x-noema-ref": "concept"},
        "kind": {"type": "string", "enum": ["related_to", "part_of"]},
    },
    "required": ["source", "target", "kind"],
}
CATEGORIES = {2: "Chemistry", 7: "Geography", 8: "Capitals", 5: "Cell biology"}


def _tool(name: str, permission: str | None) -> StructuredTool:
    def run(**_: Any) -> str:
        return "ok"

    return StructuredTool.from_function(
        run, name=name, description=name, metadata={"permission": permission}
    )


def _reading(intent: str = "change", **refs: list[Any]) -> RequestReading:
    references = tuple(Reference(kind=k, value=v) for k, vs in refs.items() for v in vs)
    return RequestReading(intent=intent, writes=("move_card",), references=references)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("request_text", "kind", "ids"),
    [
        ("Flag cards 15 and 140, and card 9.", "card", [15, 140, 9]),
        ("Signale les cartes 15 et 140.", "card", [15, 140]),
        ("Marca las tarjetas 15, 16 y 17.", "card", [15, 16, 17]),
        ("Add two cards about gases to deck #2.", "deck", [2]),
        ("Ajoute une fiche au paquet n° 3.", "deck", [3]),
        ("Add two cards about 3 gases.", "card", []),
    ],
)
def test_ids_after_their_noun_in_three_languages(
    request_text: str, kind: str, ids: list[int]
) -> None:
    assert ids_named(request_text, kind) == ids


def test_names_match_in_any_case_without_accents_ornearly_and_not_inside_quotes() -> None:
    found = names_named("mets la carte dans GÉOGRAPHY puis Capitales", CATEGORIES)
    assert [(i, round(s, 1)) for i, _, s, _ in found] == [(7, 1.0), (8, 0.9)]
    assert names_named("Move card 5 ('What is the chemistry of cells?')", CATEGORIES) == []
    assert fold("Química") == "quimica"


def test_a_capitalised_name_beside_its_noun_is_read_as_a_slot() -> None:
    assert slot_names("Please move card 88 into the Astronomy category.", "category") == [
        "Astronomy"
    ]
    assert slot_names("Range la carte dans la catégorie Histoire.", "category") == ["Histoire"]
    assert slot_names("Link the concept Halogens to Alkali metals.", "category") == []
    # a slot holds capitalised words only: the start of a longer name is that name
    assert slot_names("Link the concept Capital cities to Europe.", "concept") == ["Capital"]
    assert near("Capital", "capital cities") and not near("Astronomy", "chemistry")


@pytest.mark.parametrize(
    "request_text",
    ["Which categories are there?", "¿Qué categorías hay?", "Quelles catégories existent ?"],
)
def test_a_question_word_before_the_noun_is_no_name(request_text: str) -> None:
    assert slot_names(request_text, "category") == []
    assert slot_names("The Mythology category, please.", "category") == ["Mythology"]


def test_the_record_written_as_where_something_goes_is_the_destination() -> None:
    chemistry, biology = (
        Reference(kind="category", value=v, text=v) for v in ("Chemistry", "Biology")
    )
    assert destination("Move card 5 from Chemistry into Biology.", [chemistry, biology]) == biology
    assert (
        destination("Pasa la tarjeta 5 de Chemistry a la categoría Biology.", [chemistry, biology])
        == biology
    )
    assert destination("Move card 5 to Chemistry or Biology.", [chemistry, biology]) is None
    assert destination("Chemistry and Biology: which fits card 5?", [chemistry, biology]) is None


def test_the_language_check_reads_function_words() -> None:
    assert language_known("How am I doing?")
    assert language_known("¿Cómo voy con mis tarjetas?")
    assert language_known("Find bad cards.")  # short: the benefit of the doubt
    assert not language_known("Wie gut lerne ich im Moment insgesamt eigentlich?")
    assert not language_known("最近の学習の調子はどうですか")


def test_several_records_of_the_first_reference_make_one_call_each() -> None:
    reading = _reading(card=[154, 157], category=[8])
    assert bound_calls(MOVE, reading) == [
        {"card_id": 154, "category_id": 8},
        {"card_id": 157, "category_id": 8},
    ]
    two = RequestReading(
        intent="change",
        references=(Reference(kind="concept", value="A"), Reference(kind="concept", value="B")),
    )
    assert bound_calls(LINK, two) == [{"source": "A", "target": "B"}]
    assert bound_calls(MOVE, _reading(card=[5])) == []  # a required kind without references


def test_twice_as_many_records_as_arguments_of_a_kind_make_two_calls() -> None:
    four = RequestReading(
        intent="change",
        references=tuple(Reference(kind="concept", value=v) for v in "ABCD"),
    )
    assert bound_calls(LINK, four) == [
        {"source": "A", "target": "B"},
        {"source": "C", "target": "D"},
    ]
    three = RequestReading(intent="change", references=four.references[:3])
    assert bound_calls(LINK, three) == [{"source": "A", "target": "B"}]


def test_the_records_the_reading_linked_are_seen_as_the_requests_own() -> None:
    reading = RequestReading(
        references=(
            Reference(kind="card", value=31, label="What is the capital of Mongolia?"),
            Reference(kind="concept", value="Halogens"),
        )
    )
    seen = with_references(Seen(), reading)
    assert seen.ids == {"card": {31: "What is the capital of Mongolia?"}}
    assert list(seen.names["concept"]) == ["Halogens"]
    assert with_references(Seen(), None).ids == {}


def test_a_write_the_reading_does_not_back_is_refused() -> None:
    move = _tool("move_card", "fs:write")
    question = _reading("question", card=[5], category=[7])
    assert (write_refusal(move, {"card_id": 5, "category_id": 7}, question, MOVE) or "").startswith(
        "Not executed: move_card changes data and the request asks a question"
    )
    change = _reading(card=[5], category=[7])
    assert write_refusal(move, {"card_id": 5, "category_id": 7}, change, MOVE) is None
    assert write_refusal(move, {"card_id": 53, "category_id": 7}, change, MOVE) == (
        "Not executed: the request does not refer to card 53 (it refers to card: 5)."
    )
    read = _tool("list_categories", "fs:read")
    assert [t.name for t in offered([read, move], question)] == ["list_categories"]
    assert [t.name for t in offered([read, move], change)] == ["list_categories", "move_card"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        (" \n\t ", "empty"),
        ("x" * (MAX_REQUEST_CHARS + 1), "characters long"),
        ("move card 5\x07", "U+0007"),
    ],
)
def test_bad_input_names_the_problem_and_the_fix(text: str, fragment: str) -> None:
    problem = input_problem(text)
    assert problem is not None and problem.code == "invalid_input"
    assert fragment in problem.message


def test_line_breaks_and_tabs_are_not_control_characters_here() -> None:
    assert input_problem("Ingest this:\n\tline one\r\nline two") is None
