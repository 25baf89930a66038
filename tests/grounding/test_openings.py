"""Answer openings: parsed, filled from the trace, bound into the schema, laid over an answer."""

from __future__ import annotations

import re
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from noema_graph.grounding.answers import merged, remaining_schema
from noema_graph.grounding.openings import (
    fill_opening,
    laid_open,
    opened_fields,
    opening_pattern,
    opening_problem,
    parse_opening,
)
from noema_graph.state.models import ReasoningStep, ToolAction

OPENING = (
    "You are {tally:direction}: about {tally:confidence:.0%} confidence "
    "against {tally:recall:.0%} recall"
)


def _tool_step(tool: str, data: Any, *, failed: bool = False) -> ReasoningStep:
    output = {"status": "error"} if failed else {"status": "success", "data": data}
    action = ToolAction(tool=tool, input={}, output=output)
    return ReasoningStep(kind="tool", action=action, status="error" if failed else "ok")


TRACE = [_tool_step("tally", {"direction": "over-confident", "confidence": 0.922, "recall": 0.8})]


class Advice(BaseModel):
    figure: float
    advice: Annotated[str, Field(max_length=120, description="One sentence.")]


def test_an_opening_is_filled_with_the_formatted_figures() -> None:
    assert fill_opening(parse_opening(OPENING), TRACE) == (
        "You are over-confident: about 92% confidence against 80% recall"
    )
    assert opened_fields({"advice": "Seen {tally:recall}."}, TRACE) == {"advice": "Seen 0.8."}


@pytest.mark.parametrize(
    "trace",
    [
        [],  # no call yet
        [_tool_step("tally", {"direction": "x"}, failed=True)],  # only a failed one
        [_tool_step("tally", {"direction": None, "confidence": 1, "recall": 1})],  # no value
        [_tool_step("tally", {"direction": "x", "confidence": "high", "recall": 1})],  # not a %
    ],
)
def test_an_opening_without_every_value_is_left_out(trace: list[ReasoningStep]) -> None:
    assert fill_opening(parse_opening(OPENING), trace) is None
    assert opened_fields({"advice": OPENING}, trace) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Fixed words.", "has no placeholder"),
        ("Seen {tally}", "brace outside a placeholder"),
        ("Seen {tally:recall} }", "brace outside a placeholder"),
        ("Seen {*tally:recall}", "brace outside a placeholder"),  # a list: one value only
        ("Seen {tally:cards.*}", "brace outside a placeholder"),
        ("Seen {tally:recall{a}}", "brace outside a placeholder"),
    ],
)
def test_a_bad_opening_is_refused_quoting_it(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_opening(text)


def test_the_pattern_is_the_opening_then_one_sentence_of_room() -> None:
    pattern = opening_pattern("Score (a+b)? 90% - ok", 40)
    assert pattern is not None and pattern.startswith(r"^Score \(a\+b\)\? 90% - ok[")
    regex = re.compile(pattern)
    assert regex.match("Score (a+b)? 90% - ok, so go on.")
    assert not regex.match("Score (a+b)? 90% - ok, so go on")  # a sentence ends
    assert not regex.match("Score (a+b)? 90% - ok. Then more.")  # one sentence only
    assert not regex.match('Score (a+b)? 90% - ok "quoted".')  # nothing JSON must escape
    assert not regex.match("Score (a+b)? 90% - ok, 12 more.")  # the figures are the tools'
    assert not regex.match("Score (a+b)? 90% - ok" + "x" * 20 + ".")  # 40 characters at most
    assert not regex.match("Something else.")


def test_words_json_must_escape_get_no_pattern_and_are_only_laid_over() -> None:
    words = 'Card "Spain" moved'
    assert opening_pattern(words, 80) is None
    rest = remaining_schema(Advice, {}, {"advice": words})
    assert rest is not None and "pattern" not in rest.model_json_schema()["properties"]["advice"]
    assert merged(rest(advice="Done.", figure=1.0), {}, {"advice": words}, Advice) == {
        "advice": 'Card "Spain" moved: Done.',
        "figure": 1.0,
    }


def test_laid_open_keeps_a_text_that_starts_right_and_leads_others_with_the_opening() -> None:
    assert laid_open("Seen 80%, so fine.", "Seen 80%", None) == "Seen 80%, so fine."
    assert laid_open("All fine.", "Seen 80%", None) == "Seen 80%: All fine."
    assert laid_open("  ", "Seen 80%", None) == "Seen 80%"
    cut = laid_open("one two three four", "Seen 80%", 20)
    assert cut == "Seen 80%: one two" and len(cut) <= 20
    assert laid_open("x", "Averyveryverylongopeningwithoutspaces", 20) == "Averyveryverylongope"


def test_an_opening_that_leaves_no_room_for_the_full_stop_gets_no_pattern() -> None:
    assert opening_pattern("x" * 39, 40) is not None
    assert opening_pattern("x" * 40, 40) is None


def test_the_pattern_joins_the_field_own_schema_extras_and_a_left_out_field_opens() -> None:
    class Note(BaseModel):
        text: str = Field(default="", max_length=60, json_schema_extra={"examples": ["Hi."]})

    rest = remaining_schema(Note, {}, {"text": "Seen 80%"})
    assert rest is not None
    shown = rest.model_json_schema()["properties"]["text"]
    assert shown["examples"] == ["Hi."] and shown["pattern"].startswith("^Seen 80%[")
    assert merged({}, {}, {"text": "Seen 80%"}, Note) == {"text": "Seen 80%"}


def test_the_schema_the_model_writes_carries_the_pattern_and_the_answer_starts_with_it() -> None:
    words = "Seen 80%"
    rest = remaining_schema(Advice, {"figure": 0.8}, {"advice": words})
    assert rest is not None and list(rest.model_fields) == ["advice"]
    shown = rest.model_json_schema()["properties"]["advice"]
    assert shown["pattern"] == opening_pattern(words, 120) and shown["maxLength"] == 120
    assert "pattern" not in Advice.model_json_schema()["properties"]["advice"]  # untouched
    answer = merged(rest(advice="Fine."), {"figure": 0.8}, {"advice": words}, Advice)
    assert answer == {"advice": "Seen 80%: Fine.", "figure": 0.8}
    assert Advice.model_validate(answer).advice == "Seen 80%: Fine."


def test_an_opening_must_open_a_text_field_no_source_fills() -> None:
    fields = Advice.model_fields
    assert opening_problem({"advice": OPENING}, {}, fields) is None
    assert "not a text field" in str(opening_problem({"figure": OPENING}, {}, fields))
    problem = opening_problem({"advice": OPENING}, {"advice": "tally:recall"}, fields)
    assert "in answer_sources too" in str(problem)
