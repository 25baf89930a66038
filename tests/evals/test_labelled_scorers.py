"""The words and leak scorers on the labelled set of real answers (see labelled_answers.py)."""

from __future__ import annotations

from collections import Counter

from tests.evals.labelled_answers import load, score


def test_the_set_has_enough_answers_and_planted_cases_of_every_kind() -> None:
    entries = load()
    assert len(entries) >= 60
    kinds = Counter(kind for entry in entries for kind, _ in entry["labels"])
    assert all(kinds[k] >= 3 for k in ("number", "entry", "name", "example", "leak")), kinds
    leak_fields = {where for entry in entries for kind, where in entry["labels"] if kind == "leak"}
    assert {"question", "hint", "concept"} <= leak_fields
    assert sum(1 for entry in entries if not entry["labels"]) >= 10  # clean answers too


def test_the_scorers_reach_the_targets_on_the_labelled_set() -> None:
    result = score()
    assert result.precision >= 0.95, result.false_positive
    assert result.recall >= 0.95, result.false_negative


def test_the_score_counts_misses_and_false_alarms() -> None:
    entry = load()[0]
    planted = {**entry, "labels": [*entry["labels"], ["name", "nowhere"]]}
    missed = score([planted])
    assert missed.false_negative == [(entry["id"], "name", "nowhere")]
    cleared = score([{**entry, "labels": []}])
    assert (
        cleared.true_positive == 0
        and len(cleared.false_positive)
        == len(score([entry]).false_positive) + score([entry]).true_positive
    )
