"""Find and cut the loops a small model writes into free text.

Measured on the embedded 135M model at temperature 0: once a phrase repeats, it repeats until
the length cap (``"You are over-confident: rate lower... You are over-confident: rate
higher..."``, ``".json.json.json..."``). A loop shows as a word 4-gram that occurs twice;
natural sentences of the length the agents write almost never repeat one.

:func:`trim_repetition` keeps the text before the repeat, cut back to its last complete
sentence; :func:`distinct_items` does the same for a list of short items and drops the items
that repeat an earlier one. Both are pure, so output schemas apply them as validators
(:mod:`noema_graph.agents.schemas`) and nodes may call them on free-text answers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from noema_graph.errors import ConfigurationError

logger = logging.getLogger(__name__)

NGRAM = 4
"""Words in the n-gram whose second occurrence marks a loop."""

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.!?](?=[\s\"')\]]|$)")
_LIST_NUMBER = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+")
_LOOSE_END = " \t\n,;:-\u2013\u2014("


@dataclass(frozen=True)
class Repeat:
    """Where a text repeats itself.

    Attributes:
        ngram: The repeated words, case-folded.
        first: Character offset of the n-gram's first occurrence.
        again: Character offset of its second occurrence: everything from here on is the loop.
    """

    ngram: tuple[str, ...]
    first: int
    again: int


def _words(text: str) -> list[tuple[str, int]]:
    return [(m.group().casefold(), m.start()) for m in _WORD.finditer(text)]


def find_repeat(text: str, n: int = NGRAM) -> Repeat | None:
    """Return the earliest second occurrence of a word ``n``-gram in ``text``, or None.

    Words are runs of letters and digits, compared case-insensitively; occurrences may
    overlap (``"ben ben ben ben ben"`` repeats ``ben ben ben ben``).

    Args:
        text: The text to check.
        n: Words per n-gram; at least 1.

    Raises:
        ValueError: ``n`` is below 1.
    """
    if n < 1:
        raise ConfigurationError("n", f"must be at least 1, got {n}")
    words = _words(text)
    seen: dict[tuple[str, ...], int] = {}
    for index in range(len(words) - n + 1):
        gram = tuple(word for word, _ in words[index : index + n])
        if gram in seen:
            return Repeat(gram, seen[gram], words[index][1])
        seen[gram] = words[index][1]
    return None


def has_repetition(text: str, n: int = NGRAM) -> bool:
    """Return whether some word ``n``-gram occurs twice in ``text``."""
    return find_repeat(text, n) is not None


def trim_repetition(text: str, n: int = NGRAM) -> str:
    """Return ``text`` without its loop: cut before the repeat, back to a complete sentence.

    Text without a repeated ``n``-gram comes back unchanged. Otherwise the kept part ends at
    the last sentence end (``.``, ``!``, ``?``) before the repeat; when no sentence ends
    there, the words before the repeat are kept, without trailing commas or dashes. The
    result never holds a repeated ``n``-gram.
    """
    repeat = find_repeat(text, n)
    if repeat is None:
        return text
    head = text[: repeat.again]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    kept = head[: ends[-1]] if ends else head.rstrip(_LOOSE_END)
    kept = kept.strip()
    logger.debug(
        "cut a repeated run %r: %d -> %d chars", " ".join(repeat.ngram), len(text), len(kept)
    )
    return kept


def _item_key(item: str) -> tuple[str, ...]:
    return tuple(word for word, _ in _words(_LIST_NUMBER.sub("", item)))


def _grams(words: tuple[str, ...], n: int) -> set[tuple[str, ...]]:
    return {words[i : i + n] for i in range(len(words) - n + 1)}


def distinct_items(items: Sequence[str], n: int = NGRAM) -> list[str]:
    """Return ``items`` trimmed of loops, without items that repeat an earlier one.

    Each item goes through :func:`trim_repetition`. An item is dropped when it is empty,
    when its words equal an earlier kept item's (list numbering such as ``2.`` ignored), or
    when it shares a word ``n``-gram with one: a model that loops in a list writes the same
    item again with a new number.
    """
    kept: list[str] = []
    keys: set[tuple[str, ...]] = set()
    grams: set[tuple[str, ...]] = set()
    for item in items:
        text = trim_repetition(item, n)
        key = _item_key(text)
        own = _grams(key, n)
        if not key or key in keys or own & grams:
            logger.debug("dropped a repeated list item %r", item[:80])
            continue
        kept.append(text)
        keys.add(key)
        grams |= own
    return kept
