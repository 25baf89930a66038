"""Words from the data on plain data: choices, folded words, secrets, example words."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from noema_graph.claims.extract import claims_in
from noema_graph.grounding.checks import AnswerData, checked_answer, data_sentence
from noema_graph.grounding.choices import (
    candidates,
    choices_problem,
    chosen_schema,
    field_choices,
    kept_choices,
    parse_choices,
    unchosen_lists,
)
from noema_graph.grounding.examples import example_words, without_example_words
from noema_graph.grounding.secrets import masked, secret_values, shows_secret, unleaked
from noema_graph.grounding.words import find_whole, fold, terms
from noema_graph.state.models import ReasoningStep, ToolAction


def ok(tool: str, args: dict[str, Any], data: Any) -> ReasoningStep:
    output = {"status": "success", "data": data}
    return ReasoningStep(kind="tool", action=ToolAction(tool=tool, input=args, output=output))


class Report(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    topics: Annotated[list[Annotated[str, Field(max_length=20)]], Field(max_length=3)] = Field(
        description="Topics."
    )
    focus: str = Field(max_length=30, description="One topic.")
    summary: str = Field(max_length=200, description="A sentence.")
    count: int = 0


NOTE = ok(
    "read_note",
    {"id": 1},
    {
        "title": "Volcanoes",
        "written": "2025-04-29T11:51:19Z",
        "digest": "3441162b4deddf59f455",
        "text": "Magma rises through the crust and erupts as lava. Lava cools into basalt rock.",
        "labels": ["geology", "a label far too long for a topic"],
    },
)


def test_a_declaration_parses_into_sources_and_terms_and_a_bad_one_is_named() -> None:
    parts = parse_choices("read_note:title + terms(read_note:text) + terms(request)")
    assert [(p.source.text if p.source else None, p.terms) for p in parts] == [
        ("read_note:title", False),
        ("read_note:text", True),
        (None, True),
    ]
    with pytest.raises(ValueError, match="'request': the request is a text"):
        parse_choices("read_note:title + request")
    assert parse_choices(" ") == ()  # no tool offers a value: the field stays empty
    with pytest.raises(ValueError, match="'terms' is not a source"):
        parse_choices("terms")


def test_candidates_are_texts_with_words_that_fit_each_once() -> None:
    whole = candidates(parse_choices("read_note:"), [NOTE], "", longest=20)
    # no timestamp, no digest, nothing longer than the field's entries
    assert whole == ("Volcanoes", "geology")
    named = candidates(parse_choices("read_note:title + terms(read_note:text)"), [NOTE], "")
    assert named[:4] == ("Volcanoes", "Magma", "Magma rises", "rises")
    assert [c for c in named if fold(c) == "lava"] == ["lava"]  # once, as first spelled
    assert "through" not in named and "the" not in named  # function words are no term
    asked = candidates(parse_choices("terms(request)"), [], "Tell me about Plate tectonics")
    assert "Plate tectonics" in asked
    barred = candidates(parse_choices("read_note:title"), [NOTE], "", barred=lambda t: True)
    assert barred == ()
    assert candidates(parse_choices("other_tool:title"), [NOTE], "") == ()


def test_the_schema_offers_the_candidates_as_an_enum_and_none_as_an_empty_list() -> None:
    choices = field_choices(
        {"topics": "read_note:", "focus": "read_note:title"}, Report, [NOTE], ""
    )
    schema = chosen_schema(Report, {**choices, "summary": ()})
    properties = schema.model_json_schema()["properties"]
    assert properties["topics"]["items"]["enum"] == ["Volcanoes", "geology"]
    assert properties["topics"]["maxItems"] == 2  # no more entries than candidates
    assert properties["focus"]["enum"] == ["Volcanoes"]
    assert properties["summary"]["enum"] == [""]
    empty = chosen_schema(Report, {"topics": ()}).model_json_schema()["properties"]["topics"]
    assert empty["maxItems"] == 0
    assert chosen_schema(Report, {}) is Report
    # shown, not validated: a stray entry is the post-check's to drop, not a failed answer
    schema.model_validate({"topics": ["Basalt"], "focus": "x", "summary": "s"})


def test_the_post_check_keeps_data_values_only_in_their_spelling() -> None:
    data = {"topics": ["volcanoes", "Roman numerals", "VOLCANOES", "Geology"], "focus": "Glaciers"}
    kept, notes = kept_choices(data, {"topics": ("Volcanoes", "geology"), "focus": ("Volcanoes",)})
    assert kept == {"topics": ["Volcanoes", "geology"], "focus": ""}
    assert notes == [
        "topics: left out ['Roman numerals'], not among the values the data offers",
        "focus: left out ['Glaciers'], not among the values the data offers",
    ]
    assert kept_choices({"topics": []}, {"topics": ()}) == ({"topics": []}, [])


def test_a_choices_problem_names_the_field() -> None:
    fields = Report.model_fields
    assert "'topicz' is not a field" in str(choices_problem({"topicz": "t:"}, {}, fields))
    assert "'count' is not a text" in str(choices_problem({"count": "t:"}, {}, fields))
    assert "in answer_sources too" in str(choices_problem({"focus": "t:"}, {"focus": "t:"}, fields))
    assert choices_problem({"topics": "t:"}, {}, fields) is None
    assert unchosen_lists({}, {}, fields) == ["topics"]
    assert unchosen_lists({}, {"topics": "t:x"}, fields) == []


def test_words_fold_case_and_accents_and_match_whole() -> None:
    assert fold("  Éclair  AU\tCafé ") == "eclair au cafe"
    assert find_whole("madrid", "Is it MADRÍD? Madridian") == [(6, 12)]
    assert find_whole("Ar", "Are you sure it is ar?") == [(19, 21)]
    assert find_whole("la ventana", "Abre LA  Ventana.") == [(5, 16)]
    assert terms(["White light, split."]) == ["White", "White light", "light", "split"]


def test_secrets_are_read_from_the_declared_fields_and_masked_whole_word() -> None:
    card = ok("get_card", {"card_id": 5}, {"front": "Capital of Spain?", "back": "Madrid."})
    secrets = secret_values({"get_card": ("back",)}, [card])
    assert secrets == ("Madrid",)
    assert masked("It is MADRÍD, not Madridian.", secrets) == "It is M_____, not Madridian."
    assert shows_secret("madrid", secrets) and not shows_secret("Madridian", secrets)
    answer = {"question": "Is it Madrid?", "hint": "Starts with M", "tags": ["madrid"]}
    clean, where = unleaked(answer, secrets)
    assert clean == {"question": "Is it M_____?", "hint": "Starts with M", "tags": ["m_____"]}
    assert where == ["question", "tags[0]"]
    assert secret_values({"get_card": ("back",)}, []) == ()
    assert masked("It is O, or Cu.", ("O", "Cu")) == "It is _, or __."  # no initial of a short one
    # an answer in a sentence: the words the card's question lacks are secret on their own
    sentence = ok(
        "get_card",
        {"card_id": 42},
        {"front": "What is the capital of Morocco?", "back": "Rabat is the capital of Morocco."},
    )
    secrets = secret_values({"get_card": ("back",)}, [sentence])
    assert secrets == ("Rabat is the capital of Morocco", "Rabat")
    assert masked("The capital of Morocco is rabat.", secrets) == "The capital of Morocco is r____."
    # a cloze front holds the answer only inside its deletion, which the learner does not see
    cloze = ok(
        "get_card",
        {"card_id": 42},
        {
            "front": "{{c1::Rabat}} is the capital of {{c2::Morocco}}.",
            "back": "Rabat is Morocco's.",
        },
    )
    assert secret_values({"get_card": ("back",)}, [cloze]) == (
        "Rabat is Morocco's",
        "Morocco's",
        "Rabat",
    )
    hits = ok(
        "search_cards", {}, {"hits": [{"card": {"front": "Say: window", "back": "la ventana"}}]}
    )
    assert secret_values({"search_cards": ("hits.card.back",)}, [hits]) == ("la ventana", "ventana")


EXAMPLES = """Example 1:
Request: How am I doing with glaciers?
Action: stats {}
Final answer: {"topics": ["Roman numerals"], "summary": "Solid retention, 23 lapses."}"""


def test_example_words_are_what_only_the_examples_state() -> None:
    words = example_words(EXAMPLES, ["retention 0.81, 12 lapses", "How am I doing?"])
    # a short value, a figure and a pair of words; single words such as "Solid" are free
    assert words == ("Roman numerals", "23", "Solid retention")
    data = {"summary": "Good work on roman  numerals.", "focus": "Solid"}
    kept, notes = without_example_words(data, ["summary", "focus"], words)
    assert kept == {"summary": "", "focus": "Solid"}
    assert notes == ["summary: cleared, it held ['Roman numerals'] from a worked example"]


def test_the_checks_run_in_order_and_note_each_change() -> None:
    result = {"back": "Madrid", "concepts": ["Capital cities"], "reviews": 2}
    card = ok("get_card", {"card_id": 5}, result)
    data = AnswerData(
        schema=Report,
        filled={"count": 2},  # a figure the tool gave: the fallback may name it
        opened=(),
        choices={"topics": ("Capital cities",), "focus": ()},
        secrets=("Madrid",),
        examples=EXAMPLES,
        allowed=["Help me recall card 5."],
    )
    answer = {"topics": ["Madrid"], "focus": "", "summary": "Solid retention: Madrid.", "count": 2}
    checked, notes = checked_answer(answer, data, [card])
    assert checked == {"topics": [], "focus": "", "summary": "count 2.", "count": 2}
    assert [n.split(":")[0] for n in notes] == ["topics", "summary"]
    described = {"topics": [], "focus": "", "summary": "a sentence", "count": 2}
    checked, notes = checked_answer(described, data, [card])  # the schema's words, copied
    assert checked["summary"] == "count 2."
    assert notes == ["summary: it only repeated the field's description"]
    text, where = checked_answer("The answer is madrid.", data, [card])
    assert text == "The answer is m_____." and where == [
        "answer: masked a secret of a tool result (secret_fields)"
    ]
    assert (
        data_sentence({"retention": 0.85693, "lapses": 187}, None) == "retention 0.857, lapses 187."
    )
    assert data_sentence({"retention": 0.5}, 5) == ""


def test_the_check_notes_claim_no_action() -> None:
    # the notes are trace thoughts: the claim detector must not read them as an unbacked write
    data = AnswerData(
        schema=Report,
        filled={},
        opened=(),
        choices={"topics": ()},
        secrets=("Madrid",),
        examples=EXAMPLES,
        allowed=[],
    )
    answer = {"topics": ["x"], "focus": "Madrid", "summary": "A sentence.", "count": 0}
    _, notes = checked_answer(answer, data, [])
    answer["summary"] = "Roman numerals"
    _, more = checked_answer(answer, data, [])
    assert len({n.split(":")[1][:8] for n in [*notes, *more]}) == 4  # each kind of note
    assert [claims_in(f"Answer check: {n}") for n in [*notes, *more]] == [[]] * 6
