from __future__ import annotations

from noema_graph.memory.keyword import bm25_scores, tokenize


def test_tokenize_drops_stopwords_and_stems() -> None:
    assert tokenize("What are the Meetings about, Tuesday?") == ["meeting", "about", "tuesday"]


def test_bm25_prefers_rare_matching_terms() -> None:
    docs = ["the cat sat", "a dog barked at the cat", "dogs and cats", "nothing here"]
    scores = bm25_scores("dog", docs)
    assert scores[0] == 0.0
    assert scores[3] == 0.0
    assert scores[1] > 0 and scores[2] > 0


def test_bm25_empty_inputs() -> None:
    assert bm25_scores("the a", ["x"]) == [0.0]
    assert bm25_scores("cat", []) == []
