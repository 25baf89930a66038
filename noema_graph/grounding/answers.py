"""Answers bound to tool data: output fields filled from the tool results, never generated.

An agent's ``answer_sources`` map output-schema fields to sources
(:mod:`~noema_graph.grounding.sources`). :func:`sourced_fields` reads them from the run's
successful tool results; :func:`remaining_schema` is the output schema without them, the
only part a model is asked to write (with the filled figures in its prompt). The final result
is the model's fields with the sourced ones laid over them, validated against the whole
schema, so a figure in the answer is the tool's figure even if the model wrote another.
A text field with an opening (:mod:`~noema_graph.grounding.openings`) stays in the schema the
model writes, with the filled opening as the ``pattern`` its text starts with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from copy import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
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
