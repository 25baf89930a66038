"""Names and numbers no tool gave: the one definition, and the answer check that uses it."""

from __future__ import annotations

import dataclasses
import json

from noema_graph.agents import schemas
from noema_graph.grounding.checks import AnswerData, checked_answer
from noema_graph.grounding.secrets import mask
from noema_graph.grounding.unseen import (
    Evidence,
    is_mask,
    seen_sentences,
    trace_results,
    unseen_words,
)
from noema_graph.state.models import ReasoningStep, ToolAction
from noema_graph.tools.results import SUBAGENT_OUTPUT

RESULT = json.dumps({"status": "success", "data": {"front": "Capital of Morocco?", "lapses": 187}})
EVIDENCE = Evidence([RESULT], "Make cards about Morocco.")


def test_a_sentence_with_an_unseen_name_or_number_is_dropped_a_grounded_one_kept() -> None:
    text = "The cards cover Morocco. They name Jupiter. You lapsed 187 times, not 40.\nJupiter"
    clean, dropped = seen_sentences(text, EVIDENCE)
    assert clean == "The cards cover Morocco. Jupiter"  # it opens a sentence: no name
    assert dropped == ["Jupiter", "40"]
    assert seen_sentences("Morocco again.", EVIDENCE) == ("Morocco again.", [])
    assert unseen_words("It sits near Rabat, 3 km.", EVIDENCE) == [
        ("number", "3"),
        ("name", "Rabat"),
    ]


def test_a_masked_secret_is_a_mask_not_a_name() -> None:
    for secret in ("Madrid", "Rabat", "Buenos Aires", "Fe"):
        for word in mask(secret).split():
            assert is_mask(word) or not word[0].isalpha(), word
    assert not any(is_mask(w) for w in ("Madrid", "M_d", "snake_case", "Snake_case"))
    assert unseen_words("The capital of Morocco is R____ near Jupiter.", EVIDENCE) == [
        ("name", "Jupiter")
    ]


def _data(request: str = "Make cards about Morocco.") -> AnswerData:
    return AnswerData(
        schema=schemas.GeneratedCards,
        filled={"deck_id": 2},
        opened=(),
        choices={},
        secrets=(),
        examples="",
        allowed=[request],
        request=request,
    )


def _trace() -> list[ReasoningStep]:
    action = ToolAction(tool="get_card", input={"card_id": 5}, output=json.loads(RESULT))
    return [ReasoningStep(kind="tool", status="ok", action=action, observation=RESULT)]


def test_the_answer_check_drops_only_the_sentences_no_tool_gave() -> None:
    answer = {"deck_id": 2, "card_ids": [1], "summary": "Cards on Morocco. Also on Jupiter."}
    checked, notes = checked_answer(answer, _data(), _trace())
    assert checked["summary"] == "Cards on Morocco."
    assert notes == ["summary: dropped the sentences holding ['Jupiter'], which no tool gave"]
    kept, none = checked_answer({**answer, "summary": "Cards on Morocco."}, _data(), _trace())
    assert kept["summary"] == "Cards on Morocco." and none == []
    # nothing left: the field falls back to the figures the tools gave
    in_deck_2 = _data("Make cards about Morocco in deck 2.")
    emptied, _ = checked_answer({**answer, "summary": "Also Jupiter in 2023."}, in_deck_2, _trace())
    assert emptied["summary"] == "deck id 2."
    assert emptied["card_ids"] == [1]  # list fields are the choices' business


def test_a_subagents_tool_results_are_evidence_too() -> None:
    child = {"reasoning": {"steps": [{"observation": '{"data": {"name": "Jupiter"}}'}]}}
    action = ToolAction(tool="consult", input={}, output={SUBAGENT_OUTPUT: child})
    trace = [ReasoningStep(kind="tool", status="ok", action=action, observation="done")]
    evidence = Evidence(trace_results(trace), "Consult the other agent.")
    assert seen_sentences("It names Jupiter.", evidence) == ("It names Jupiter.", [])
    assert seen_sentences("It names Saturn.", evidence) == ("", ["Saturn"])


def test_the_fallback_names_only_figures_the_evidence_holds() -> None:
    # deck 7 is only an argument the model wrote (or an unwritten field's empty value):
    # the fallback sentence leaves it out rather than state a figure no tool gave
    data = dataclasses.replace(_data(), filled={"deck_id": 7, "lapses": 187})
    answer = {"deck_id": 7, "card_ids": [1], "summary": "Also Jupiter."}
    checked, _ = checked_answer(answer, data, _trace())
    assert checked["summary"] == "lapses 187."
    bare = dataclasses.replace(data, filled={"deck_id": 7})
    assert checked_answer(answer, bare, _trace())[0]["summary"] == ""
