"""The repetition check on free text: find, trim, and de-duplicate list items."""

from __future__ import annotations

import pytest

from noema_graph.models.repetition import (
    distinct_items,
    find_repeat,
    has_repetition,
    trim_repetition,
)

# What the embedded model wrote into the calibration agent's advice before the fix.
LOOPING_ADVICE = (
    "You are over-confident: rate lower unless you are sure. You are over-confident: rate "
    "higher, you are overconfident: rate lower, you are overconfident: rate higher, you are"
)


def test_plain_sentences_have_no_repetition() -> None:
    text = "Your bias is 0.119: you rate your answers higher than you recall them. Rate lower."
    assert find_repeat(text) is None
    assert trim_repetition(text) == text


def test_the_second_occurrence_of_a_4_gram_is_found() -> None:
    repeat = find_repeat(LOOPING_ADVICE)
    assert repeat is not None
    assert repeat.ngram == ("you", "are", "over", "confident")
    assert repeat.first == 0
    assert LOOPING_ADVICE[repeat.again :].startswith("You are over-confident: rate higher")


def test_words_compare_case_insensitively_and_may_overlap() -> None:
    assert has_repetition("Ben ben BEN ben ben")
    assert not has_repetition("ben ben ben ben")  # one 4-gram, once


def test_a_loop_is_cut_back_to_the_last_complete_sentence() -> None:
    assert trim_repetition(LOOPING_ADVICE) == (
        "You are over-confident: rate lower unless you are sure."
    )


def test_without_a_complete_sentence_the_words_before_the_loop_stay() -> None:
    text = "Then review daily, review daily, review daily, review daily"
    trimmed = trim_repetition(text)
    assert trimmed == "Then review daily"
    assert not has_repetition(trimmed)


def test_a_looping_path_keeps_its_start() -> None:
    text = "./data/brier_2" + ".json" * 40
    trimmed = trim_repetition(text)
    assert trimmed.startswith("./data/brier_2.json")
    assert len(trimmed) < 40
    assert not has_repetition(trimmed)


@pytest.mark.parametrize(
    "text",
    [
        LOOPING_ADVICE,
        "a b c d a b c d a b c d",
        "one two three four five. one two three four five. one two",
        "x " * 300,
        "Rate lower. " * 50,
    ],
)
def test_trimmed_text_never_repeats_a_4_gram(text: str) -> None:
    trimmed = trim_repetition(text)
    assert not has_repetition(trimmed)
    assert text.startswith(trimmed.split(" ")[0])


def test_a_shorter_ngram_finds_shorter_loops() -> None:
    assert find_repeat("rate lower, rate lower", n=2) is not None
    assert find_repeat("rate lower, rate lower") is None
    with pytest.raises(ValueError, match="at least 1"):
        find_repeat("text", n=0)


def test_list_items_that_repeat_an_earlier_one_are_dropped() -> None:
    items = [
        "1. Use a short list of steps to measure recall.",
        "2. Use a short list of steps to measure recall.",
        "Reviews cluster on weekends",
        "reviews cluster on weekends",
        "Spanish verbs are failed twice as often",
        "",
    ]
    assert distinct_items(items) == [
        "1. Use a short list of steps to measure recall.",
        "Reviews cluster on weekends",
        "Spanish verbs are failed twice as often",
    ]


def test_list_items_lose_their_own_loops() -> None:
    assert distinct_items(["Ben, User Id 2, User Id 2, User Id 2"]) == ["Ben, User Id 2"]


def test_distinct_items_keep_different_short_items() -> None:
    items = ["Spanish verbs", "Noble gases", "Capitals of Asia"]
    assert distinct_items(items) == items
