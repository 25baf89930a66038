"""Answer leaks: a tool-result field declared secret from the learner shown in the answer.

An agent's definition names, per tool, the fields of its result the learner must not see
(``AgentDefinition.secret_fields``: the card's ``back`` for the tutor). For every call of
such a tool in the run, each secret value is looked for in every text field of the answer,
case-insensitively, as whole words (``Co`` is found in ``{{c1::Co}}`` but not in ``Cobalt``).
A secret of several words also leaks when a field holds every word of it that the rest of
the tool result does not (its core: for the back "Rabat is the capital of Morocco." and
the front "What is the capital of Morocco?", the core is "Rabat"; a cloze deletion of the
front, ``{{c1::Rabat}}``, is hidden and does not count): the answer is out even when the
sentence is reworded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from noema_graph.evals.words import text_fields
from noema_graph.grounding.words import shown_text, texts_of
from noema_graph.trajectory.schema import Trajectory

_WORDS = re.compile(r"\w+")
"""A cloze deletion (``{{c1::Rabat}}``): hidden text, so it tells the learner nothing."""


class Leak(BaseModel):
    """A secret value found in a text field of the answer."""

    model_config = ConfigDict(frozen=True)

    field: str
    tool: str
    secret_field: str
    secret: str


def _dig(data: object, path: str) -> Iterator[object]:
    """Yield the values at dotted ``path`` in ``data`` (lists are walked item by item)."""
    if isinstance(data, list):
        for item in data:
            yield from _dig(item, path)
        return
    head, _, rest = path.partition(".")
    if isinstance(data, dict) and head in data:
        inner: object = data[head]
        if rest:
            yield from _dig(inner, rest)
        elif isinstance(inner, list):
            yield from inner
        else:
            yield inner


def core_words(secret: str, known: str) -> list[str]:
    """Return the words of ``secret`` that ``known`` (the rest of its result) does not hold."""
    seen = set(_WORDS.findall(shown_text(known).casefold()))
    return [w for w in _WORDS.findall(secret.casefold()) if w not in seen]


def secrets_of(
    trajectory: Trajectory, secret_fields: Mapping[str, Sequence[str]]
) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """Return ``(tool, field, value, core words)`` for every secret value the tools returned."""
    found: list[tuple[str, str, str, tuple[str, ...]]] = []
    for step in trajectory.steps:
        if step.action is None or step.action.tool not in secret_fields or not step.observation:
            continue
        try:
            result: object = json.loads(step.observation)
        except json.JSONDecodeError:
            continue
        data: object = result.get("data", result) if isinstance(result, dict) else result
        paths = secret_fields[step.action.tool]
        values = [(p, str(v).strip()) for p in paths for v in _dig(data, p)]
        secret = {v for _, v in values}
        known = " ".join(t for t in texts_of(data) if t.strip() not in secret)
        for path, value in values:
            if value:
                core = tuple(core_words(value, known))
                found.append((step.action.tool, path, value, core))
    return found


def _contains(text: str, secret: str, core: Sequence[str]) -> bool:
    words = r"\s+".join(re.escape(w) for w in secret.casefold().split())
    if re.search(rf"(?<!\w){words}(?!\w)", text.casefold()) is not None:
        return True
    held = set(_WORDS.findall(text.casefold()))
    return len(secret.split()) > 1 and bool(core) and all(w in held for w in core)


def answer_leaks(trajectory: Trajectory, secret_fields: Mapping[str, Sequence[str]]) -> list[Leak]:
    """Return every secret value (see the module) that a text field of the answer holds."""
    secrets = secrets_of(trajectory, secret_fields)
    if not secrets:
        return []
    leaks: list[Leak] = []
    for field, text, _ in text_fields(trajectory.final_output):
        for tool, path, value, core in secrets:
            leak = Leak(field=field, tool=tool, secret_field=path, secret=value)
            if _contains(text, value, core) and leak not in leaks:
                leaks.append(leak)
    return leaks
