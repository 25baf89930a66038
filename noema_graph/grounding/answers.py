"""Answers bound to tool data: output fields filled from the tool results, never generated.

An agent's ``answer_sources`` map output-schema fields to sources
(:mod:`~noema_graph.grounding.sources`). :func:`sourced_fields` reads them from the run's
successful tool results; :func:`remaining_schema` is the output schema without them, the
only part a model is asked to write (with the filled figures in its prompt). The final result
is the model's fields with the sourced ones laid over them, validated against the whole
schema, so a figure in the answer is the tool's figure even if the model wrote another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

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


def remaining_schema(schema: type[BaseModel], filled: Mapping[str, Any]) -> type[BaseModel] | None:
    """Return ``schema`` without the ``filled`` fields (None when no field remains).

    The fields keep their types, constraints and descriptions; the schema itself is returned
    when nothing is filled.
    """
    if not filled:
        return schema
    rest: dict[str, Any] = {
        n: (f.annotation, f) for n, f in schema.model_fields.items() if n not in filled
    }
    if not rest:
        return None
    # a model that writes a filled field anyway is not wrong: the tool's value replaces it
    config: ConfigDict = {**schema.model_config, "extra": "ignore"}
    return create_model(schema.__name__, __config__=config, __doc__=schema.__doc__, **rest)


def merged(value: BaseModel | Mapping[str, Any] | None, filled: Mapping[str, Any]) -> Any:
    """Return the model's answer as a dict with the sourced ``filled`` fields laid over it."""
    if value is None:
        return dict(filled) if filled else None
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else dict(value)
    return {**data, **filled}
