"""Ground a final answer in the run's tool results, through its output schema.

An agent that answers from tool results (``answer_after_tool_results``) must not cite an id
no tool returned. :func:`grounded_schema` narrows every integer ``*_id`` field of the output
schema to the values observed under that key, and caps a list field at the length of the
observed list of the same name, so schema-constrained decoding (the embedded model's
grammar, OpenAI's strict JSON schema) cannot emit more: measured on the 135M model, copying
a list of consecutive ids it otherwise counts on past the list's end.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

from annotated_types import MaxLen
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from noema_graph.state.models import ReasoningStep


@dataclass
class Observed:
    """What tool results hold: the ids under each ``*_id`` key, list lengths under each key."""

    ids: dict[str, set[int]] = field(default_factory=dict[str, set[int]])
    list_lengths: dict[str, int] = field(default_factory=dict[str, int])

    def add(self, value: object) -> None:
        """Record the ids and lists found anywhere in the JSON ``value``."""
        if isinstance(value, Mapping):
            for key, item in value.items():
                name = str(key)
                if isinstance(item, int) and not isinstance(item, bool) and name.endswith("_id"):
                    self.ids.setdefault(name, set()).add(int(item))
                    continue
                if isinstance(item, list):
                    length = len(item)
                    self.list_lengths[name] = max(self.list_lengths.get(name, 0), length)
                self.add(item)
        elif isinstance(value, list):
            for item in value:
                self.add(item)


def observed(trace: Sequence[ReasoningStep]) -> Observed:
    """Return what the run's successful tool results hold."""
    found = Observed()
    for step in trace:
        if step.kind != "tool" or step.status != "ok":
            continue
        if step.action is not None and isinstance(step.action.output, Mapping):
            found.add(step.action.output)  # the full result; the observation may be cut short
        elif step.observation:
            try:
                found.add(json.loads(step.observation))
            except json.JSONDecodeError:
                continue
    return found


def _narrow(annotation: object, name: str, seen: Observed) -> object:
    """Return ``annotation`` with observed ids as a Literal, recursing into models and lists."""
    if annotation is int and seen.ids.get(name):
        return Literal[tuple(sorted(seen.ids[name]))]  # pyright: ignore[reportInvalidTypeForm] -- built at run time
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return grounded_schema(annotation, seen)
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        narrowed = _narrow(item, name, seen)
        return annotation if narrowed is item else list[narrowed]
    return annotation


def _grounded_field(name: str, info: FieldInfo, seen: Observed) -> tuple[object, FieldInfo] | None:
    """Return the grounded (annotation, field info) of one field, or None when it stays."""
    annotation = _narrow(info.annotation, name, seen)
    length = seen.list_lengths.get(name)
    if get_origin(info.annotation) is list and length:
        # a list copied from a tool result is no longer than that result
        annotation = Annotated[annotation, MaxLen(length)]
    elif annotation is info.annotation:
        return None
    return annotation, info


def grounded_schema(schema: type[BaseModel], seen: Observed) -> type[BaseModel]:
    """Return a subclass of ``schema`` whose answer can only cite what the tools returned.

    An integer ``*_id`` field admits only the ids observed under that key; a list field
    named like an observed list is at most that long. Fields with nothing observed stay as
    they are, and ``schema`` itself is returned when nothing changes. An instance of the
    result is an instance of ``schema``.
    """
    changed: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        if (grounded := _grounded_field(name, info, seen)) is not None:
            changed[name] = grounded
    if not changed:
        return schema
    return create_model(schema.__name__, __base__=schema, **changed)
