"""The ids and names a run has seen, by kind of record.

A kind is a lower-case singular noun (``card``, ``category``, ``user``, ``concept``). Where
values come from:

* the request: a number after a noun (``card 5``, ``deck #4``, ``user_id 2``, ``category
  id 7``) is an id of that kind;
* each successful tool call: its arguments and its result. In any JSON object a key
  ``<kind>_id`` with an integer holds an id of that kind; an object with an integer ``id``
  under a key (``"categories": [{"id": 7, "name": "Geography"}]``, ``"card": {...}``) is a
  record of the key's kind, named by its ``name`` (or ``title``); a ``name`` without an id
  is a name of that kind (concepts are referred to by name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from noema_graph.grounding.sources import result_data
from noema_graph.state.models import ReasoningStep

_TAGGED = re.compile(
    r"\b([A-Za-z][A-Za-z]+)(?:[ _-]?id)?\s*(?:#|no\.?|number|id)?\s*[:=]?\s*#?(\d{1,12})\b",
    re.IGNORECASE,
)
_LABELS = ("name", "title")


NOUNS: dict[str, tuple[str, ...]] = {
    "card": ("card", "flashcard", "carte", "fiche", "tarjeta", "ficha"),
    "deck": ("deck", "paquet", "mazo", "baraja"),
    "category": ("category", "categorie", "categoria"),
    "concept": ("concept", "concepto"),
}
"""Nouns of each kind in English, French and Spanish, accent-folded, singular (a plural
``s``/``es`` is accepted); a kind not listed is named by itself."""


def singular(word: str) -> str:
    """Return the kind named by ``word``: lower case, singular (``categories`` -> ``category``)."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


@dataclass
class Seen:
    """Ids (with their record's name, when known) and names seen, by kind, in order."""

    ids: dict[str, dict[int, str | None]] = field(default_factory=dict[str, dict[int, str | None]])
    names: dict[str, dict[str, None]] = field(default_factory=dict[str, dict[str, None]])

    def add_id(self, kind: str, value: int, label: str | None = None) -> None:
        """Record id ``value`` of ``kind`` (keeping a name learnt earlier)."""
        known = self.ids.setdefault(kind, {})
        known[value] = label or known.get(value)
        if label:
            self.add_name(kind, label)

    def add_name(self, kind: str, name: str) -> None:
        """Record ``name`` of ``kind``."""
        self.names.setdefault(kind, {})[name] = None

    def add_json(self, value: Any, kind: str | None = None) -> None:
        """Record what the JSON ``value`` holds; ``kind`` is the key it was found under."""
        if isinstance(value, list):
            for item in value:
                self.add_json(item, kind)
            return
        if not isinstance(value, Mapping):
            return
        record: Mapping[str, Any] = value
        label = next((str(record[k]) for k in _LABELS if isinstance(record.get(k), str)), None)
        own = record.get("id")
        if kind is not None and isinstance(own, int) and not isinstance(own, bool):
            self.add_id(kind, own, label)
        elif kind is not None and label is not None:
            self.add_name(kind, label)
        for key, item in record.items():
            name = str(key)
            if name.endswith("_id") and _is_int(item):
                self.add_id(singular(name[:-3]), int(item))
            elif isinstance(item, Mapping | list):
                self.add_json(item, singular(name))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def seen_in(request: str, trace: Sequence[ReasoningStep] = ()) -> Seen:
    """Return what ``request`` and the successful tool calls of ``trace`` hold."""
    seen = Seen()
    for word, number in _TAGGED.findall(request):
        seen.add_id(singular(word), int(number))
    for step in trace:
        if step.kind != "tool" or step.status != "ok" or step.action is None:
            continue
        seen.add_json(step.action.input)
        seen.add_json(result_data(step.action.output))
    return seen


_QUOTED = re.compile(r"""(?<!\w)'[^']*'(?!\w)|"[^"]*"|\([^)]*\)""")


def referred(request: str, names: Sequence[str], kind: str, wanted: int = 1) -> list[str]:
    """Return the ``names`` of ``kind`` records the request refers to, most specific first.

    Of more mentioned names than the ``wanted`` references, those written next to the kind's
    noun (``the Vocabulary category``) win; else those outside quotes and brackets (a card's
    quoted front names no category of its own).
    """
    found = mentioned(request, names)
    if len(found) <= wanted:
        return found
    noun = rf"{re.escape(kind)}(?:ies|s)?" if not kind.endswith("y") else re.escape(kind[:-1])
    text = request.lower()
    beside = [
        n
        for n in found
        if re.search(rf"{re.escape(n.lower())}\s+{noun}|{noun}\s+{re.escape(n.lower())}", text)
    ]
    if len(beside) >= wanted:
        return beside
    outside = mentioned(_QUOTED.sub(" ", request), found)
    return outside if len(outside) >= wanted else found


def mentioned(request: str, names: Sequence[str]) -> list[str]:
    """Return the ``names`` the request mentions, in order of mention, longest match first.

    A name matches as whole words, case-insensitively; a name inside a longer mentioned name
    (``Transition metals`` inside ``Post-transition metals``) does not count.
    """
    text = request.lower()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for name in sorted(names, key=len, reverse=True):
        pattern = r"(?<![\w-])" + re.escape(name.lower()) + r"(?![\w-])"
        for match in re.finditer(pattern, text):
            start, end = match.span()
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            found.append((start, name))
            break
    return [name for _, name in sorted(found)]
