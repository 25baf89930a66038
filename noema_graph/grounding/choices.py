"""Answer choices: list and name fields chosen from the run's data, never invented.

A small model asked for a list of topics copies its worked example's (every learner weak on
"Roman numerals") or invents some. An agent's ``answer_choices`` map each such field of its
output schema to where its entries may come from::

    choices := part ( "+" part )* | ""  the candidates of every part, in order, each once;
                                        "": no tool offers any, the field stays empty
    part    := source                   the text values a source names (every string in it)
             | "terms(" from ")"        the key terms of those texts (grounding.words.terms)
    from    := source | "request"       "request": the learner's request

``source`` is the path language of :mod:`~noema_graph.grounding.sources` (``tool:`` alone
reads the whole result). Only text that holds a word counts (a timestamp or a digest does
not), and no candidate is longer than the field admits. Examples:
``get_card:concepts + get_card:tags``, ``get_chunks:source.title +
terms(get_chunks:chunks.*.text)``.

:func:`chosen_schema` turns each declared field of the schema the model writes into an
``enum`` of its candidates (a list field into a list of them, at most as long as there are
candidates; with none, an empty list or an empty text), which llama.cpp's grammar enforces
while decoding and remote structured output honours. :func:`kept_choices` then drops any
entry that is not a candidate (case and accents aside), for a model that ignores the
schema, and says what it dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from copy import copy
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from noema_graph.errors import InvalidValue
from noema_graph.grounding.sources import MISSING, REQUEST, Source, parse_source, resolve
from noema_graph.grounding.words import fold, terms
from noema_graph.state.models import ReasoningStep

MAX_CHOICES = 64
"""Most candidates a field offers (the first ones): an enum stays a small grammar."""
_TERMS = re.compile(r"^terms\((.+)\)$")
_HAS_WORD = re.compile(r"(?<!\w)[^\W\d_]{2,}(?!\w)")


@dataclass(frozen=True)
class Part:
    """One ``+`` part of a choices declaration."""

    source: Source | None
    """The source read; None for the request."""
    terms: bool


def parse_choices(text: str) -> tuple[Part, ...]:
    """Parse a choices declaration (see the module docstring).

    Raises:
        InvalidValue: a part is neither a source nor ``terms(...)``; the message quotes it.
    """
    if not text.strip():  # the tools offer no values for the field: it stays empty
        return ()
    parts: list[Part] = []
    for raw in text.split("+"):
        piece = raw.strip()
        match = _TERMS.match(piece)
        inner = match.group(1).strip() if match else piece
        if inner == REQUEST:
            if not match:
                msg = f"{piece!r}: the request is a text, not a value: write 'terms(request)'"
                raise InvalidValue(msg)
            parts.append(Part(None, True))
            continue
        parts.append(Part(parse_source(inner), match is not None))
    return tuple(parts)


def choices_problem(
    choices: Mapping[str, str], sources: Mapping[str, str], fields: Mapping[str, FieldInfo]
) -> str | None:
    """Return what is wrong with ``choices`` for an output schema's ``fields``, or None.

    A chosen field is a text or a list of text that the model writes (not one ``sources``
    fills).
    """
    for name in choices:
        if name not in fields:
            return f"{name!r} is not a field of the output schema"
        if name in sources:
            return f"{name!r} is in answer_sources too: a field is filled or chosen, not both"
        if _text_kind(fields[name].annotation) is None:
            return f"{name!r} is not a text or a list of text: only words are chosen"
    return None


def unchosen_lists(
    choices: Mapping[str, str], sources: Mapping[str, str], fields: Mapping[str, FieldInfo]
) -> list[str]:
    """Return the list-of-text fields the model writes that ``choices`` leave free."""
    return [
        name
        for name, field in fields.items()
        if _text_kind(field.annotation) == "list" and name not in choices and name not in sources
    ]


def _text_kind(annotation: Any) -> Literal["text", "list"] | None:
    if _is_text(annotation):
        return "text"
    if get_origin(annotation) is list and _is_text(get_args(annotation)[0]):
        return "list"
    return None


def _is_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    return get_origin(annotation) is Annotated and get_args(annotation)[0] is str


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def candidates(
    parts: Sequence[Part],
    trace: Sequence[ReasoningStep],
    request: str,
    *,
    longest: int | None = None,
    barred: Callable[[str], bool] | None = None,
) -> tuple[str, ...]:
    """Return the candidates of ``parts`` in the run's data, each once (folded), in order.

    ``longest`` bounds a candidate's length (the field's ``max_length``); ``barred`` leaves
    out a candidate it accepts (one that would show a secret).
    """
    found: dict[str, str] = {}
    for part in parts:
        value = request if part.source is None else resolve(part.source, trace)
        if value is MISSING:
            continue
        texts = [" ".join(s.split()) for s in _strings(value)]
        for text in terms(texts) if part.terms else texts:
            if not _HAS_WORD.search(text) or (longest is not None and len(text) > longest):
                continue
            if barred is not None and barred(text):
                continue
            found.setdefault(fold(text), text)
    return tuple(found.values())[:MAX_CHOICES]


def field_choices(
    declared: Mapping[str, str],
    schema: type[BaseModel],
    trace: Sequence[ReasoningStep],
    request: str,
    barred: Callable[[str], bool] | None = None,
) -> dict[str, tuple[str, ...]]:
    """Return the candidates of each declared field of ``schema`` in the run's data."""
    chosen: dict[str, tuple[str, ...]] = {}
    for name, text in declared.items():
        field = schema.model_fields.get(name)
        if field is None:
            continue
        longest = _longest(field)
        chosen[name] = candidates(
            parse_choices(text), trace, request, longest=longest, barred=barred
        )
    return chosen


def _longest(field: FieldInfo) -> int | None:
    """Return the ``max_length`` of a text field, or of a list field's entries."""
    if get_origin(field.annotation) is list:
        return _max_length(get_args(get_args(field.annotation)[0])[1:])
    return _max_length(field.metadata)


def _max_length(metadata: Sequence[Any]) -> int | None:
    """Return the smallest ``max_length`` in ``metadata`` (constraints or FieldInfos)."""
    flat = [m for i in metadata for m in (i.metadata if isinstance(i, FieldInfo) else [i])]
    limits = [m.max_length for m in flat if isinstance(getattr(m, "max_length", None), int)]
    return min(limits) if limits else None


def chosen_schema(
    schema: type[BaseModel], choices: Mapping[str, tuple[str, ...]]
) -> type[BaseModel]:
    """Return ``schema`` whose JSON schema offers each declared field only its candidates.

    A list field's items get the candidates as their ``enum`` and the list at most as many
    items (none without a candidate); a text field gets them as its ``enum`` (only the empty
    text without one). As with an opening's pattern, this is shown, not validated: the
    grammar enforces it while decoding, and :func:`kept_choices` drops what a model that
    ignored it wrote, so a stray entry costs the entry and not the answer. Fields without
    choices stay as they are; ``schema`` itself is returned when none changes.
    """
    changed: dict[str, Any] = {}
    for name, values in choices.items():
        field = schema.model_fields.get(name)
        if field is None or (kind := _text_kind(field.annotation)) is None:
            continue
        enum: dict[str, Any] = {"type": "string", "enum": list(values) or [""]}
        if kind == "list":
            limit = len(values)
            if (allowed := _max_length(field.metadata)) is not None:
                limit = min(limit, allowed)
            extra: dict[str, Any] = {"items": enum, "maxItems": limit}
        else:
            extra = enum
        field = copy(field)
        own = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        field.json_schema_extra = {**own, **extra}
        changed[name] = (field.annotation, field)
    if not changed:
        return schema
    return create_model(schema.__name__, __base__=schema, **changed)


def kept_choices(
    data: Mapping[str, Any], choices: Mapping[str, tuple[str, ...]]
) -> tuple[dict[str, Any], list[str]]:
    """Return ``data`` with every declared field holding candidates only, and what was dropped.

    An entry matches a candidate when they are equal case and accents aside (the
    candidate's spelling is kept); a list loses the entries that match none and keeps each
    candidate once; a text that matches none becomes empty.
    """
    kept = dict(data)
    notes: list[str] = []
    for name, values in choices.items():
        if name not in kept:
            continue
        spelled = {fold(v): v for v in values}
        value = kept[name]
        entries = value if isinstance(value, list) else [value]
        good: list[str] = []
        dropped: list[Any] = []
        for entry in entries:
            match = spelled.get(fold(entry)) if isinstance(entry, str) else None
            if match is not None and match not in good:
                good.append(match)
            elif match is None and entry != "":
                dropped.append(entry)
        kept[name] = good if isinstance(value, list) else (good[0] if good else "")
        if dropped:
            notes.append(f"{name}: left out {dropped!r}, not among the values the data offers")
    return kept, notes
