"""Answers bound to tool data: output fields filled from the tool results, never generated.

An agent's ``answer_sources`` map output-schema fields to sources
(:mod:`~noema_graph.grounding.sources`). :func:`sourced_fields` reads them from the run's
successful tool results; :func:`remaining_schema` is the output schema without them, the
only part a model is asked to write (with the filled figures in its prompt). The final result
is the model's fields with the sourced ones laid over them, validated against the whole
schema, so a figure in the answer is the tool's figure even if the model wrote another.
A text field with an opening (:mod:`~noema_graph.grounding.openings`) stays in the schema the
model writes, with the filled opening as the ``pattern`` its text starts with.

A run that may not write (a question to an agent that can) has no result of its write tools:
:func:`unwritten_fields` gives each field only they source its empty value (no moves, no
links, no cards), so the model neither reports a change nobody made nor loops on a list of
them; a source's option on a read tool (``| get_concept_graph:links``) fills it from data.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from copy import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from noema_graph.grounding.openings import laid_open, opening_pattern
from noema_graph.grounding.sources import MISSING, parse_source, resolve
from noema_graph.state.models import ReasoningStep


def sourced_fields(sources: Mapping[str, str], trace: Sequence[ReasoningStep]) -> dict[str, Any]:
    """Return the fields whose source has a value in the run's successful tool results."""
    filled: dict[str, Any] = {}
    for name, text in sources.items():
        value = resolve(parse_source(text), trace)
        if value is not MISSING:
            filled[name] = value
    return filled


EMPTY_VALUES: tuple[object, ...] = ([], None, "", 0, 0.0, False)
"""The empty values tried, in order, for a field no write filled (the first its type admits)."""


def unwritten_fields(
    sources: Mapping[str, str],
    schema: type[BaseModel],
    barred: Collection[str],
    trace: Sequence[ReasoningStep],
) -> dict[str, object]:
    """Return the empty value of each field sourced from a ``barred`` write tool.

    ``barred`` names the write tools the run may not call. A field whose source has no
    value in the run and names one of them reports a change that did not happen: it is
    empty (the first of :data:`EMPTY_VALUES` its type admits), not left to the model.
    A field whose type admits none of them stays the model's.
    """
    empty: dict[str, object] = {}
    for name, text in sources.items():
        source = parse_source(text)
        field = schema.model_fields.get(name)
        if field is None or not set(source.tools) & set(barred):
            continue
        if resolve(source, trace) is not MISSING:
            continue
        one: dict[str, Any] = {name: (field.annotation, field)}
        probe = create_model(schema.__name__, **one)
        for value in EMPTY_VALUES:
            try:
                empty[name] = getattr(probe.model_validate({name: value}), name)
            except ValidationError:
                continue
            break
    return empty


def max_length(field: FieldInfo) -> int | None:
    """Return the ``max_length`` a field's constraints set, if any."""
    limits = [
        m.max_length for m in field.metadata if isinstance(getattr(m, "max_length", None), int)
    ]
    return min(limits) if limits else None


def remaining_schema(
    schema: type[BaseModel], filled: Mapping[str, Any], openings: Mapping[str, str] | None = None
) -> type[BaseModel] | None:
    """Return ``schema`` without the ``filled`` fields (None when no field remains).

    The fields keep their types, constraints and descriptions; a field with a filled
    opening gets a ``pattern`` in its JSON schema: the opening, then the model's words.
    The schema itself is returned when nothing is filled or opened.
    """
    openings = openings or {}
    if not filled and not openings:
        return schema
    rest: dict[str, Any] = {}
    for name, field in schema.model_fields.items():
        if name in filled:
            continue
        if name in openings and (pattern := opening_pattern(openings[name], max_length(field))):
            field = copy(field)  # noqa: PLW2901 -- the schema's own field stays as it is
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            field.json_schema_extra = {**extra, "pattern": pattern}  # shown, not validated
        rest[name] = (field.annotation, field)
    if not rest:
        return None
    # a model that writes a filled field anyway is not wrong: the tool's value replaces it
    config: ConfigDict = {**schema.model_config, "extra": "ignore"}
    return create_model(schema.__name__, __config__=config, __doc__=schema.__doc__, **rest)


def merged(
    value: BaseModel | Mapping[str, Any] | None,
    filled: Mapping[str, Any],
    openings: Mapping[str, str] | None = None,
    schema: type[BaseModel] | None = None,
) -> Any:
    """Return the model's answer as a dict with the sourced ``filled`` fields laid over it.

    Each text field of ``openings`` starts with its opening (:func:`laid_open`, within the
    ``max_length`` ``schema`` gives the field).
    """
    if value is None:
        return dict(filled) if filled else None
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else dict(value)
    fields = schema.model_fields if schema is not None else {}
    for name, words in (openings or {}).items():
        if isinstance(text := data.get(name, ""), str):  # a field left out opens too
            limit = max_length(fields[name]) if name in fields else None
            data[name] = laid_open(text, words, limit)
    return {**data, **filled}
