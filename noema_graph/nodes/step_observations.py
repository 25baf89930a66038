"""What a ReAct step prompt shows of a tool result: the fields the step's call reads.

On the embedded model a step prompt's observations are processed again in every run (no
saved prefix holds them), so a tool step shows of each earlier result only what its own
call can use (issue 35 item 2): the keys of the offered tools' arguments (nested ones
included: a card's ``front`` for ``create_cards``), ids and names, and the keys the plan's
sources read; texts longer than :data:`TEXT_CHARS` are cut with :func:`cut_mark`. A step
that offers no tool (its answer is written from the observation) sees each result whole,
and so does a failure or a result that is not a standard JSON result. The run's state,
grounding and the answer prompt keep reading the whole results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import cast

from langchain_core.tools import BaseTool

from noema_graph.grounding.sources import REQUEST_SOURCES, parse_source
from noema_graph.models.grammar import tool_args_schema
from noema_graph.state.models import TaskStep

TEXT_CHARS = 160
"""Longest text an observation shows whole to a tool step; longer ones are cut."""
NAME_KEYS = frozenset({"id", "ids", "name", "title", "path"})
"""Keys always kept, besides those ending in ``_id`` / ``_ids``: what a record is called by."""
_PATH_WORD = re.compile(r"^[A-Za-z_]\w*$")


def cut_mark(dropped: int) -> str:
    """Return what ends a cut text: bracketed prose, which no tool's value looks like."""
    return f" [{dropped} more characters not shown]"


def argument_keys(tools: Iterable[BaseTool]) -> frozenset[str]:
    """Return every property name of the tools' argument schemas, nested ones included."""
    keys: set[str] = set()
    for tool in tools:
        _schema_keys(tool_args_schema(tool), keys)  # converted once per tool
    return frozenset(keys)


def _schema_keys(schema: object, keys: set[str]) -> None:
    if isinstance(schema, dict):
        node = cast("dict[str, object]", schema)
        properties = node.get("properties")
        if isinstance(properties, dict):
            keys.update(cast("dict[str, object]", properties))
        for value in node.values():
            _schema_keys(value, keys)
    elif isinstance(schema, list):
        for value in cast("list[object]", schema):
            _schema_keys(value, keys)


def source_keys(steps: Iterable[TaskStep]) -> frozenset[str]:
    """Return the result keys the ``steps``' argument sources read (``tool:a.b`` -> a, b)."""
    keys: set[str] = set()
    for step in steps:
        for text in step.sources.values():
            if text in REQUEST_SOURCES:
                continue
            try:
                source = parse_source(text)
            except ValueError:  # a source the plan's own check reports; nothing to keep here
                continue
            for option in source.options:
                keys.update(s for s in option.path if _PATH_WORD.match(s) and s != "args")
    return frozenset(keys)


def step_keys(tools: Sequence[BaseTool], steps: Iterable[TaskStep]) -> frozenset[str] | None:
    """Return the keys a tool step's observations show; None (everything) without tools."""
    if not tools:
        return None
    return argument_keys(tools) | source_keys(steps)


def trimmed(text: str, keep: frozenset[str] | None) -> str:
    """Return the observation ``text`` with only the ``keep`` fields, ids and names.

    ``keep`` None, a failure, or a text that is no JSON result: ``text`` as it is. A result
    of which nothing would be kept shows all its fields (its long texts cut).
    """
    if keep is None:
        return text
    try:
        value: object = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict) and "status" in value:
        result = cast("dict[str, object]", value)
        if result.get("status") != "success" or "data" not in result:
            return text
        data = result["data"]
        shown = _fields(data, keep)
        return _dump({**result, "data": shown if shown not in _EMPTY else _short(data)})
    shown = _fields(value, keep)
    return _dump(shown if shown not in _EMPTY else _short(value))


_EMPTY: tuple[object, ...] = (None, {}, [])


def _kept(key: str, keep: frozenset[str]) -> bool:
    return key in keep or key in NAME_KEYS or key.endswith(("_id", "_ids"))


def _fields(value: object, keep: frozenset[str]) -> object:
    """Return ``value`` with the kept keys only; None when nothing in it is kept."""
    if isinstance(value, dict):
        shown: dict[str, object] = {}
        for key, item in cast("dict[str, object]", value).items():
            if _kept(key, keep):
                shown[key] = _short(item)
            elif (inner := _fields(item, keep)) not in _EMPTY:
                shown[key] = inner
        return shown or None
    if isinstance(value, list):
        items = [_fields(item, keep) for item in cast("list[object]", value)]
        return [item for item in items if item not in _EMPTY] or None
    return None


def _short(value: object) -> object:
    """Return ``value`` with every text longer than :data:`TEXT_CHARS` cut and marked."""
    if isinstance(value, str):
        if len(value) <= TEXT_CHARS:
            return value
        kept = value[:TEXT_CHARS].rstrip()
        return kept + cut_mark(len(value) - len(kept))
    if isinstance(value, dict):
        return {k: _short(v) for k, v in cast("dict[str, object]", value).items()}
    if isinstance(value, list):
        return [_short(v) for v in cast("list[object]", value)]
    return value


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
