"""Split text into overlapping chunks on paragraph, then sentence, then word boundaries."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\s*\n\s*\n|\s*\Z)", re.DOTALL)
_SENTENCE = re.compile(r"\S.*?(?:[.!?](?=\s)|\Z)", re.DOTALL)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Span:
    """A ``[start, end)`` character range of the source text."""

    start: int
    end: int

    @property
    def size(self) -> int:
        """Length in characters."""
        return self.end - self.start


def _units(text: str, chunk_size: int) -> list[Span]:
    """Break ``text`` into spans no longer than ``chunk_size``, largest boundary first."""
    out: list[Span] = []
    for para in _PARAGRAPH.finditer(text):
        if para.end() - para.start() <= chunk_size:
            out.append(Span(para.start(), para.end()))
            continue
        for sent in _SENTENCE.finditer(text, para.start(), para.end()):
            start, end = sent.start(), sent.end()
            if end - start <= chunk_size:
                out.append(Span(start, end))
                continue
            out.extend(_word_spans(text, start, end, chunk_size))
    return out


def _word_spans(text: str, start: int, end: int, chunk_size: int) -> list[Span]:
    spans: list[Span] = []
    for word in _WORD.finditer(text, start, end):
        for cut in range(word.start(), word.end(), chunk_size):  # a word longer than a chunk
            spans.append(Span(cut, min(cut + chunk_size, word.end())))
    return spans


def chunk_spans(text: str, chunk_size: int, overlap: int) -> list[Span]:
    """Pack boundary units greedily into chunks of at most ``chunk_size`` characters.

    Each chunk after the first starts with the trailing units of the previous one whose
    combined span fits in ``overlap`` characters, so context carries across the cut without
    splitting a sentence.

    Args:
        text: The document.
        chunk_size: Most characters per chunk (> 0).
        overlap: Most characters repeated from the previous chunk (< ``chunk_size``).

    Returns:
        Character spans of ``text``, in order.
    """
    units = _units(text, chunk_size)
    chunks: list[Span] = []
    first = 0
    while first < len(units):
        last = first
        while last + 1 < len(units) and units[last + 1].end - units[first].start <= chunk_size:
            last += 1
        chunks.append(Span(units[first].start, units[last].end))
        if last + 1 >= len(units):
            break
        nxt = last + 1
        # Step back over tail units while they fit the overlap and leave room for the next
        # new unit, so every chunk advances.
        while (
            nxt - 1 > first
            and units[last].end - units[nxt - 1].start <= overlap
            and units[last + 1].end - units[nxt - 1].start <= chunk_size
        ):
            nxt -= 1
        first = nxt
    return chunks
