"""Keyword relevance: a small Okapi BM25 over the candidate entries, computed in Python.

Why in Python and not an FTS5 table: the memory namespaces of one user and agent are small
(hundreds to a few thousand entries), the scoring must work over any ``BaseStore``
(``SqliteStore``, ``AsyncSqliteStore``, ``InMemoryStore``, later PostgreSQL) without opening a
second connection, and a side table would have to be kept in step with the Store's own deletes
and TTL sweeps. Recall stays read-only because it only reads items through the Store.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

K1 = 1.5
B = 0.75
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOPWORD_TEXT = """
    a an and are as at be been but by can could did do does for from had has have how i if in
    into is it its me my no not of on or our so than that the their them then there these they
    this to too up was we were what when where which who why will with would you your
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _stem(word: str) -> str:
    """Strip the commonest English suffixes so 'meetings' matches 'meeting'."""
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def tokenize(text: str) -> list[str]:
    """Lower-case, split on non-word characters, drop stop words and stem."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """Return the Okapi BM25 score of each document for ``query`` (0.0 when no term matches).

    Args:
        query: The search text.
        documents: The candidate texts; the IDF statistics come from these alone.

    Returns:
        One score per document, in the same order.
    """
    terms = set(tokenize(query))
    docs = [Counter(tokenize(d)) for d in documents]
    if not terms or not docs:
        return [0.0] * len(documents)
    avg_len = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    idf = {
        t: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5))
        for t in terms
        if (n := sum(1 for d in docs if t in d))
    }
    scores: list[float] = []
    for doc in docs:
        length = sum(doc.values())
        score = 0.0
        for term, weight in idf.items():
            tf = doc.get(term, 0)
            if tf:
                score += weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg_len))
        scores.append(score)
    return scores
