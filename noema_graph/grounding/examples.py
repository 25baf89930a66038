"""Keep what a worked example states out of an answer's free text.

An agent's worked examples teach the tool-use turns; their final answers are made up
(topics, names, figures, what happened). A small model copies them: every learner's
diagnosis read "Solid retention, irregular rhythm.", the example's summary. List fields
cannot (their entries are chosen from the data, :mod:`~noema_graph.grounding.choices`);
text fields are checked here. :func:`example_words` lists the figures, short values and word pairs
of the examples' requests and final answers that the run's data does not hold: not in a tool
result, the request, the agent's instructions outside the examples or the answer schema.
:func:`without_example_words` clears a text field that holds one of them, so it falls back
to the data (see ``nodes/finalize.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from noema_graph.grounding.words import fold, holds, terms, texts_of

_ANSWER = re.compile(r"^(?:Final answer|Request): (.*)$", re.MULTILINE)
_TOKEN = re.compile(r"[^\W_]+(?:[.,'\u2019-][^\W_]+)*%?")
SHORT_WORDS = 3
"""Most words of an example's value that is taken whole (a topic, a name, a concept)."""


def _stated(examples: str) -> Iterator[str]:
    """Yield the texts the examples' requests and final answers state."""
    for line in _ANSWER.findall(examples):
        try:
            yield from texts_of(json.loads(line))
        except json.JSONDecodeError:
            yield line


def _units(text: str) -> Iterator[str]:
    """Yield what ``text`` states: its figures, itself when short, and its word pairs."""
    yield from (t for t in _TOKEN.findall(text) if any(c.isdigit() for c in t))
    words = text.strip(" .!?").split()
    if 0 < len(words) <= SHORT_WORDS and any(c.isalpha() for c in text):
        yield " ".join(words)  # a topic, a name, a concept
    yield from (term for term in terms([text]) if " " in term)  # "irregular rhythm"


def example_words(examples: str, allowed: Sequence[str]) -> tuple[str, ...]:
    """Return what the ``examples`` state that no ``allowed`` text holds.

    What an example states: each figure (a token with a digit), each short value (a list
    entry, a concept: at most :data:`SHORT_WORDS` words) and each pair of content words side
    by side in its texts (``irregular rhythm``). Single common words (``think``,
    ``which``) are not: an answer may use them whatever its data.
    """
    known = " ".join(allowed)
    found: dict[str, str] = {}
    for text in _stated(examples):
        for unit in _units(text):
            if fold(unit) not in found and not holds(known, unit):
                found[fold(unit)] = unit
    return tuple(found.values())


def without_example_words(
    data: Mapping[str, Any], fields: Sequence[str], words: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """Return ``data`` with each text of ``fields`` that holds one of ``words`` emptied.

    The notes name each field and the example's words it held.
    """
    kept = dict(data)
    notes: list[str] = []
    for name in fields:
        text = kept.get(name)
        if not isinstance(text, str):
            continue
        held = [w for w in words if holds(text, w)]
        if held:
            kept[name] = ""
            notes.append(f"{name}: cleared, it held {held!r} from a worked example")
    return kept, notes
