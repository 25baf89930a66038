"""Secrets: tool-result fields the learner must not be shown, kept out of the answer.

An agent's ``secret_fields`` name, per tool, the fields of its result that are secret from
the learner (the tutor's ``get_card = ["back"]``: the card's answer). :func:`secret_values`
reads them from the run's successful calls (the whole text, and each word of it the
record's other fields lack); :func:`unleaked` checks every text of an answer
before it is returned and masks each secret found in it, as whole words with case and
accents aside, by its first character and a blank per letter (``Madrid`` -> ``M_____``),
which is a hint and never the answer; each masked field is named in the notes the trace
keeps. The evaluation's leak scorer reads the same declaration.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from noema_graph.grounding.sources import result_data, tool_results
from noema_graph.grounding.words import content_words, find_whole, fold, shown_text, texts_of
from noema_graph.state.models import ReasoningStep

_TRIM = " \t\n.!?;:,\"'"


def _records(value: Any, path: Sequence[str]) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Yield (record, key) for each record the dotted ``path`` ends in (lists walked)."""
    if isinstance(value, list):
        for item in value:
            yield from _records(item, path)
        return
    if not isinstance(value, Mapping) or not path or path[0] not in value:
        return
    if len(path) == 1:
        yield value, path[0]
    else:
        yield from _records(value[path[0]], path[1:])


def _own_words(secret: str, shown: str) -> list[str]:
    """Return the content words of ``secret`` that ``shown`` (the record's other text) lacks.

    ``Rabat is the capital of Morocco.`` on a card asking for the capital of Morocco: the
    answer is ``Rabat``, and a turn that writes it in other words still shows it.
    """
    words = [w for clause in content_words(secret) for w in clause if w]
    return [w for w in words if not find_whole(w, shown)]


def secret_values(
    declared: Mapping[str, Sequence[str]], trace: Sequence[ReasoningStep]
) -> tuple[str, ...]:
    """Return the secret texts the run's successful calls returned, longest first, each once.

    Each declared field's whole text is a secret, and so is each content word of it that
    the record's other fields do not hold (the words that make the answer).
    """
    found: dict[str, str] = {}
    for tool, paths in declared.items():
        for _, data in tool_results(trace, tool):
            for path in paths:
                for record, key in _records(result_data(data), path.split(".")):
                    others = (t for k, v in record.items() if k != key for t in texts_of(v))
                    shown = shown_text(" ".join(others))  # a cloze's deletion is hidden
                    for text in texts_of(record[key]):
                        clean = text.strip(_TRIM)
                        for secret in (clean, *_own_words(clean, shown)):
                            if any(c.isalnum() for c in secret):
                                found.setdefault(fold(secret), secret)
    return tuple(sorted(found.values(), key=len, reverse=True))


def shows_secret(text: str, secrets: Sequence[str]) -> bool:
    """Return whether ``text`` holds one of ``secrets`` as whole words (folded)."""
    return any(find_whole(secret, text) for secret in secrets)


SHOWN_INITIAL_FROM = 3
"""Letters and digits a secret needs before its mask shows its first one (``M_____``): the
first of ``O`` or ``Cu`` would be all or half of the answer."""


def mask(text: str) -> str:
    """Return ``text`` with its letters and digits blanked, all but the first of a long one."""
    blank = "".join("_" if c.isalnum() else c for c in text)
    if sum(c.isalnum() for c in text) < SHOWN_INITIAL_FROM:
        return blank
    return text[:1] + blank[1:]


def masked(text: str, secrets: Sequence[str]) -> str:
    """Return ``text`` with each whole-word occurrence of a secret masked."""
    for secret in secrets:  # longest first: a secret inside a longer one is masked with it
        for start, end in reversed(find_whole(secret, text)):
            text = text[:start] + mask(text[start:end]) + text[end:]
    return text


def unleaked(data: Any, secrets: Sequence[str], where: str = "") -> tuple[Any, list[str]]:
    """Return ``data`` with every secret masked in its texts, and the fields masked."""
    if not secrets:
        return data, []
    if isinstance(data, str):
        clean = masked(data, secrets)
        return clean, ([where or "answer"] if clean != data else [])
    if isinstance(data, Mapping):
        out: dict[str, Any] = {}
        notes: list[str] = []
        for key, value in data.items():
            name = f"{where}.{key}" if where else str(key)
            out[str(key)], found = unleaked(value, secrets, name)
            notes += found
        return out, notes
    if isinstance(data, list):
        items: list[Any] = []
        notes = []
        for index, value in enumerate(data):
            clean, found = unleaked(value, secrets, f"{where}[{index}]")
            items.append(clean)
            notes += found
        return items, notes
    return data, []
