"""The words-no-tool-gave scorer and the answer-leak scorer, on hand-made runs."""

from __future__ import annotations

import json
from typing import Any

from noema_graph.evals.leaks import answer_leaks
from noema_graph.evals.words import example_phrases, tool_results, ungrounded_words
from noema_graph.grounding.unseen import Evidence, seen_sentences, unseen_words
from noema_graph.nodes.common import TRUNCATED
from noema_graph.trajectory.schema import StepAction, Trajectory, TrajectoryStep

SECRET = {"get_card": ("back",)}


def _run(answer: Any, *results: tuple[str, Any], request: str = "How am I doing?") -> Trajectory:
    steps = [
        TrajectoryStep(
            action=StepAction(tool=tool, input={}),
            observation=json.dumps({"status": "success", "data": data}),
        )
        for tool, data in results
    ]
    return Trajectory(input=request, final_output=answer, steps=steps)


def _found(trajectory: Trajectory, examples: tuple[str, ...] = ()) -> set[tuple[str, str]]:
    phrases = example_phrases(examples)
    return {(w.kind, w.text) for w in ungrounded_words(trajectory, examples=phrases)}


STATS = ("learning_stats", {"retention": 0.85693359375, "lapses": 187, "due_now": 12})


def test_numbers_are_grounded_by_a_result_rounded_or_as_a_percentage() -> None:
    grounded = _run({"summary": "Retention 0.857 (86%, 85.7 percent); 187 lapses, 12 due."}, STATS)
    assert _found(grounded) == set()
    invented = _run({"summary": "Retention 0.91 and 40% of cards lapse; card c1 is fine."}, STATS)
    assert _found(invented) == {("number", "0.91"), ("number", "40%")}
    numbers_not_text = _run({"lapses": 999, "summary": "Fine."}, STATS)
    assert _found(numbers_not_text) == set()  # only text fields are read


def test_list_entries_and_names_must_come_from_a_result_or_the_request() -> None:
    deck = ("search_cards", {"hits": [{"front": "Capital of Peru?", "deck": "World Capitals"}]})
    answer = {
        "weak_areas": ["world capitals", "Roman numerals"],
        "summary": "You mix up Peru and Chile, as you said in Spanish.",
    }
    found = _found(_run(answer, deck, request="Help me, I study Spanish."))
    assert found == {("entry", "Roman numerals"), ("name", "Chile")}


def test_phrases_of_the_worked_examples_are_copies_unless_a_result_holds_them() -> None:
    examples = (
        '{"weak_areas": ["Roman numerals"], "summary": "Solid retention, irregular rhythm."}',
    )
    copied = _run({"summary": "Solid retention, irregular rhythm. Keep going."}, STATS)
    assert ("example", "Solid retention, irregular rhythm") in _found(copied, examples)
    held = ("search_cards", {"hits": [{"front": "Roman numerals: XIV?"}]})
    assert _found(_run({"weak_areas": ["Roman numerals"]}, held), examples) == set()


def test_a_secret_field_leaks_in_any_text_field_whole_words_any_case() -> None:
    card = ("get_card", {"id": 5, "front": "Capital of Spain?", "back": "Madrid"})
    for field in ("question", "hint", "concept"):
        answer = {"question": "Which city?", "hint": "Think.", "concept": "Capitals", "n": 1}
        answer[field] = f"It is MADRID, of course ({field})."
        (leak,) = answer_leaks(_run(answer, card), SECRET)
        assert (leak.field, leak.secret) == (field, "Madrid")
    safe = {"question": "Which city is the capital of Spain?", "hint": "Madridista clubs."}
    assert answer_leaks(_run(safe, card), SECRET) == []
    assert answer_leaks(_run({"hint": "Madrid"}, card), {}) == []  # no declaration, no leak
    nested = {"hints": ["first", "madrid"]}
    assert [leak.field for leak in answer_leaks(_run(nested, card), SECRET)] == ["hints[1]"]


def test_a_short_secret_is_found_inside_a_cloze_but_not_inside_a_word() -> None:
    card = ("get_card", {"id": 9, "front": "Symbol of cobalt?", "back": "Co"})
    assert answer_leaks(_run({"question": "Fill {{c1::Co}} in."}, card), SECRET)
    assert not answer_leaks(_run({"question": "What is Cobalt's symbol?"}, card), SECRET)


def test_a_reworded_sentence_leaks_through_the_words_the_front_does_not_hold() -> None:
    back = "Rabat is the capital of Morocco."
    card = ("get_card", {"id": 42, "front": "What is the capital of Morocco?", "back": back})
    reworded = {"question": "Which city?", "hint": "The capital of Morocco is Rabat."}
    assert [leak.field for leak in answer_leaks(_run(reworded, card), SECRET)] == ["hint"]
    asked = {"question": "What is the capital of Morocco?"}
    assert answer_leaks(_run(asked, card), SECRET) == []
    cloze = (
        "get_card",
        {"id": 42, "front": "{{c1::Rabat}} is the capital of Morocco.", "back": back},
    )
    assert answer_leaks(_run(reworded, cloze), SECRET)  # a cloze deletion is hidden text


def test_a_timestamp_gives_its_parts_and_no_names() -> None:
    flag = ("flag_card", {"card_id": 45, "created_at": "2026-11-27T21:38:01Z"})
    answer = "Flagged: created 2026-11-27T21:38:01Z, card 45."
    assert _found(_run(answer, flag)) == set()


def test_a_refusals_candidates_from_the_store_are_data_and_nothing_else_is() -> None:
    message = "There is no category named 'Astronomy'; categories: Biology, Chemistry."
    refused = Trajectory(
        input="Move card 5 into Astronomy.",
        final_output=message,
        metadata={"store_candidates": ["Biology", "Chemistry"]},
    )
    assert _found(refused) == set()
    unread = Trajectory(input="Move card 5 into Astronomy.", final_output=message)
    assert ("name", "Chemistry") in _found(unread)


CARD = ("get_card", {"front": "Capital of Morocco?", "back": "Rabat", "lapses": 187})
TEXTS = (
    "The cards cover Morocco. They name Jupiter. You lapsed 187 times, not 40.",
    "Rabat in 2023, 86% of Europe.",
    "The capital of Morocco is R____; see Mars.",
)


def test_the_grader_and_the_answer_check_share_one_definition() -> None:
    for text in TEXTS:
        run = _run({"summary": text}, CARD, request="Make cards about Morocco.")
        graded = [(w.kind, w.text) for w in ungrounded_words(run)]
        evidence = Evidence(tool_results(run), run.input)
        assert graded == unseen_words(text, evidence), text
        # what the answer check keeps, the grader passes
        kept, dropped = seen_sentences(text, evidence)
        assert bool(dropped) == bool(graded)
        assert ungrounded_words(_run({"summary": kept}, CARD, request=run.input)) == []


def _refused(answer: str, **metadata: Any) -> Trajectory:
    run = _run(answer, request="Link Halogens to Zinc.")
    return run.model_copy(update={"metadata": {"success": False, **metadata}})


def test_masks_and_the_frameworks_own_messages_are_no_words_of_the_model() -> None:
    # a masked secret is a mask; a name the model invented in the same answer still counts
    tutor = _run({"hint": "The capital of Morocco is R____, near Jupiter."}, CARD)
    assert _found(tutor) == {("name", "Jupiter")}
    # the request reader's refusal: the framework wrote it (known by the stop reason)
    message = "link_concepts needs 2 concepts; the request names 1 the store holds."
    assert _found(_refused(message, stop_reason="refused", error="not_found")) == set()
    # a tool's domain error that stopped the run: its message is the tool's
    assert _found(_refused(message, stop_reason="loop_detected", error="not_found")) == set()
    # the loop guard itself, or an answer the model wrote, is graded as words
    assert _found(_refused(message, stop_reason="loop_detected", error="loop_detected")) == {
        ("number", "2"),
        ("number", "1"),
    }
    assert _found(_refused(message, stop_reason=None)) == {("number", "2"), ("number", "1")}


def test_a_truncation_marker_is_no_number_but_a_number_beside_it_is() -> None:
    cut = f'{{"lapses": 187, "names": "Morocco{TRUNCATED} 570 chars]'
    assert _found(_run(cut, CARD)) == set()
    assert _found(_run(f"{cut} and 571", CARD)) == {("number", "571")}
