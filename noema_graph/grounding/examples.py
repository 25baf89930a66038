"""Keep what a worked example states out of an answer's free text.

An agent's worked examples teach the tool-use turns; their final answers are made up
(topics, names, figures, what happened). A small model copies them: every learner's
diagnosis read "Solid retention, irregular rhythm.", the example's summary. List fields
cannot (their entries are chosen from the data, :mod:`~noema_graph.grounding.choices`);
text fields are checked here. :func:`example_words` lists the words and figures of the
examples' requests and final answers that the run's data does not hold: not in a tool
result, the request, the agent's instructions outside the examples or the answer schema.
:func:`without_example_words` clears a text field that holds one of them, so it falls back
to the data (see ``nodes/finalize.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from noema_graph.grounding.words import STOP_WORDS, fold, holds

_ANSWER = re.compile(r"^(?:Final answer|Request): (.*)$", re.MULTILINE)
_TOKEN = re.compile(r"[^\W_]+(?:[.,'\u2019-][^\W_]+)*%?")
MIN_LETTERS = 4
"""Shortest word of an example that counts as what the example states."""


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType] -- JSON
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType] -- JSON
            yield from _texts(item)


def _stated(examples: str) -> Iterator[str]:
    """Yield the texts the examples' requests and final answers state."""
    for line in _ANSWER.findall(examples):
        try:
            yield from _texts(json.loads(line))
        except json.JSONDecodeError:
            yield line


def example_words(examples: str, allowed: Sequence[str]) -> tuple[str, ...]:
    """Return the words and figures the ``examples`` state that no ``allowed`` text holds.

    A word counts from :data:`MIN_LETTERS` letters, unless it is a function word; a figure
    (a token with a digit) always counts.
    """
    known = {fold(t) for text in allowed for t in _TOKEN.findall(text)}
    found: dict[str, str] = {}
    for text in _stated(examples):
        for token in _TOKEN.findall(text):
            key = fold(token)
            figure = any(c.isdigit() for c in token)
            if not figure and (len(token) < MIN_LETTERS or key in STOP_WORDS):
                continue
            if key not in known:
                found.setdefault(key, token)
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
