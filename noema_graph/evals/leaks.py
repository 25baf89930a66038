"""Answer leaks: a tool-result field declared secret from the learner shown in the answer.

An agent's definition names, per tool, the fields of its result the learner must not see
(``AgentDefinition.secret_fields``: the card's ``back`` for the tutor). For every call of
such a tool in the run, each secret value is looked for in every text field of the answer,
case-insensitively, as whole words (``Co`` is found in ``{{c1::Co}}`` but not in ``Cobalt``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from noema_graph.evals.words import text_fields
from noema_graph.trajectory.schema import Trajectory


class Leak(BaseModel):
    """A secret value found in a text field of the answer."""

    model_config = ConfigDict(frozen=True)

    field: str
    tool: str
    secret_field: str
    secret: str


def _dig(data: Any, path: str) -> Iterator[Any]:
    """Yield the values at dotted ``path`` in ``data`` (lists are walked item by item)."""
    if isinstance(data, list):
        for item in data:  # pyright: ignore[reportUnknownVariableType] -- JSON list
            yield from _dig(item, path)
        return
    head, _, rest = path.partition(".")
    if isinstance(data, dict) and head in data:
        inner: Any = data[head]
        if rest:
            yield from _dig(inner, rest)
        elif isinstance(inner, list):
            yield from inner  # pyright: ignore[reportUnknownArgumentType] -- JSON list
        else:
            yield inner


def secrets_of(
    trajectory: Trajectory, secret_fields: Mapping[str, Sequence[str]]
) -> list[tuple[str, str, str]]:
    """Return ``(tool, field, value)`` for every secret value the run's tools returned."""
    found: list[tuple[str, str, str]] = []
    for step in trajectory.steps:
        if step.action is None or step.action.tool not in secret_fields or not step.observation:
            continue
        try:
            result: Any = json.loads(step.observation)
        except json.JSONDecodeError:
            continue
        data: Any = result.get("data", result) if isinstance(result, dict) else result  # pyright: ignore[reportUnknownMemberType] -- JSON object
        for path in secret_fields[step.action.tool]:
            for value in _dig(data, path):
                if isinstance(value, str | int | float) and str(value).strip():
                    found.append((step.action.tool, path, str(value).strip()))
    return found


def _contains(text: str, secret: str) -> bool:
    words = r"\s+".join(re.escape(w) for w in secret.casefold().split())
    return re.search(rf"(?<!\w){words}(?!\w)", text.casefold()) is not None


def answer_leaks(trajectory: Trajectory, secret_fields: Mapping[str, Sequence[str]]) -> list[Leak]:
    """Return every secret value (see the module) that a text field of the answer holds."""
    secrets = secrets_of(trajectory, secret_fields)
    if not secrets:
        return []
    leaks: list[Leak] = []
    for field, text, _ in text_fields(trajectory.final_output):
        for tool, path, value in secrets:
            leak = Leak(field=field, tool=tool, secret_field=path, secret=value)
            if _contains(text, value) and leak not in leaks:
                leaks.append(leak)
    return leaks
