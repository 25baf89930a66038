"""Words compared as a reader compares them: folded, whole, and the terms of a text.

:func:`fold` lowers case and drops accents (``Éclair`` and ``eclair`` are one word);
:func:`find_whole` finds a phrase as whole words of a text; :func:`terms` lists the key terms
of a text (its content words and the pairs of them that stand side by side), the vocabulary
a list field may choose from (:mod:`~noema_graph.grounding.choices`). The stop words are the
function words of English, French and Spanish, the languages the agents serve.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

_ENGLISH = (
    "a an and are as at be been but by can could did do does for from had has have how i if "
    "in into is it its just me more most my no not of on one or our should so some such than "
    "that the their them then there these they this those through to too two under up very "
    "was we were what when where which while who why will with would you your yours also "
    "about after again all any because before being both each few further here only other "
    "own same over out off once unless until down above below between during against"
)
_FRENCH = (
    "le la les un une des du de et ou est sont au aux ce ces cet cette dans en par pour sur "
    "avec sans que qui quoi dont elle il ils elles nous vous leur leurs son sa ses mon ma mes "
    "ton ta tes pas plus ne se lui"
)
_SPANISH = (
    "el los las unos unas del al y o es son este esta estos estas ese esa con sin por para "
    "sobre que quien como pero su sus mi mis tu tus lo le les muy mas ya"
)
STOP_WORDS: frozenset[str] = frozenset(f"{_ENGLISH} {_FRENCH} {_SPANISH}".split())
"""Function words that are no term on their own (English, French, Spanish)."""
MIN_TERM_LETTERS = 3
"""Shortest content word a term may be."""

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_CLAUSE = re.compile(r"[.,;:!?()\[\]{}\"\u201c\u201d\u00ab\u00bb\n]+")
_SPACES = re.compile(r"\s+")


CLOZE_DELETION = re.compile(r"\{\{c\d+::.*?\}\}", re.DOTALL)
"""A cloze deletion (``{{c1::Rabat}}``): text a card hides from the learner."""


def shown_text(text: str) -> str:
    """Return ``text`` as a learner sees it before answering: its cloze deletions blanked."""
    return CLOZE_DELETION.sub(" ", text)


def texts_of(value: Any) -> Iterator[str]:
    """Yield every text inside a JSON value (its strings, in mappings and lists at any depth)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from texts_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item)


QUOTED = re.compile(
    r"""(?<!\w)'[^']*'(?!\w)|"[^"]*"|\u00ab[^\u00bb]*\u00bb|\u201c[^\u201d]*\u201d"""
    r"""|(?<!\w)\u2018[^\u2019]*\u2019(?!\w)"""
)
"""Quoted text of a request ('Glaciers', "Glaciers", «Glaciers», curly quotes): it names
things (a title, a card's front), it does not ask."""
QUOTES = "'\"`\u00ab\u00bb\u201c\u201d\u2018\u2019"
"""The quote characters :data:`QUOTED` knows."""


def quoted(request: str) -> list[str]:
    """Return the quoted phrases of ``request``, their quotes removed, in order."""
    return [m.group(0).strip(QUOTES).strip() for m in QUOTED.finditer(request)]


def _introducing_colon(request: str) -> int:
    """Return the index of the first colon outside quotes (a title may hold one), else -1."""
    return QUOTED.sub(lambda m: "_" * len(m.group(0)), request).find(":")


def introduced_text(request: str) -> str | None:
    """Return the text after the colon that introduces it (quotes removed), or None.

    The colon is the first one outside quotes (a title may hold one); None: no such colon.
    """
    colon = _introducing_colon(request)
    if colon < 0:
        return None
    return request[colon + 1 :].strip().strip(QUOTES).strip()


def named_by_quote(request: str) -> str | None:
    """Return the one phrase ``request`` quotes before the text it introduces, else None.

    ``Ingest this note titled 'Plate tectonics': ...`` names 'Plate tectonics'; quotes inside
    the introduced text are its own; none or several quoted phrases name nothing.
    """
    colon = _introducing_colon(request)
    phrases = quoted(request[:colon] if colon >= 0 else request)
    return phrases[0] if len(phrases) == 1 and phrases[0] else None


def fold(text: str) -> str:
    """Return ``text`` lower-cased, without accents, its spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", bare.casefold()).strip()


def _folded_with_offsets(text: str) -> tuple[str, list[int]]:
    """Return ``fold`` of each character of ``text`` and, per folded character, its origin."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        decomposed = unicodedata.normalize("NFKD", char)
        folded = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
        out.append(folded)
        origin.extend([index] * len(folded))
    return "".join(out), origin


def find_whole(phrase: str, text: str) -> list[tuple[int, int]]:
    """Return the spans of ``text`` where ``phrase`` stands as whole words, folded.

    Case, accents and the amount of white space between words do not matter; a match
    inside a longer word (``Ar`` in ``Are``) does not count.
    """
    words = fold(phrase).split()
    if not words:
        return []
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)")
    folded, origin = _folded_with_offsets(text)
    return [(origin[m.start()], origin[m.end() - 1] + 1) for m in pattern.finditer(folded)]


def holds(text: str, phrase: str) -> bool:
    """Return whether ``phrase`` stands in ``text`` as whole words (folded)."""
    return bool(find_whole(phrase, text))


def content_words(text: str) -> Iterator[list[str]]:
    """Yield each clause of ``text`` as its words, a function word or short word as ``""``."""
    for clause in _CLAUSE.split(text):
        yield [
            word if len(word) >= MIN_TERM_LETTERS and fold(word) not in STOP_WORDS else ""
            for word in _WORD.findall(clause)
        ]


def terms(texts: Iterable[str]) -> list[str]:
    """Return the key terms of ``texts``, in order of first appearance, each once (folded).

    A term is a content word (not a function word, at least :data:`MIN_TERM_LETTERS`
    letters) or two content words side by side in one clause (``white light``), spelled as
    they first appear.
    """
    found: dict[str, str] = {}
    for text in texts:
        for words in content_words(text):
            for index, word in enumerate(words):
                if not word:
                    continue
                found.setdefault(fold(word), word)
                if index + 1 < len(words) and words[index + 1]:
                    pair = f"{word} {words[index + 1]}"
                    found.setdefault(fold(pair), pair)
    return list(found.values())
