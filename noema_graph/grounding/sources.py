"""Name a value in the run's successful tool results.

Grammar of a source (what a default plan's argument or an answer field may say)::

    source  := option ( "|" option )*          the first option that has a value wins
    option  := [ "*" ] tool ":" [ path ] [ "{" fields "}" ]   no path: the whole result
    path    := segment ( "." segment )*         a key, a list index, "*" (every item) or "#"
                                                (the length of a list)
    fields  := field ( "," field )*             keep (and rename) keys of each dict
    field   := name [ "=" name ]                ``issue=reason``: key ``issue`` from ``reason``

``tool:path`` reads the latest successful call of ``tool``; ``*tool:path`` makes a list
of the value in every successful call, in order. A path that starts with ``args`` reads
the call's arguments instead of its result; any other path reads the result's ``data``
(the standard tool result's payload). Examples: ``compute_calibration:brier``,
``list_due_cards:cards.0.card_id``, ``ingest_text:chunk_ids.#``, ``*move_card:args``,
``flag_quality_issues:flagged | *flag_card:args{card_id,issue=reason,severity}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from noema_graph.errors import InvalidValue
from noema_graph.grounding.words import named_by_quote
from noema_graph.state.models import ReasoningStep


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""What :func:`resolve` returns when no successful call holds the value."""

_OPTION = re.compile(r"^(\*)?([A-Za-z_][\w-]*):([\w.*#]*)(?:\{([\w=, ]+)\})?$")


@dataclass(frozen=True)
class Option:
    """One ``[*]tool:path{fields}`` alternative of a source."""

    every: bool
    tool: str
    path: tuple[str, ...]
    fields: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Source:
    """A parsed source: its options, tried in order."""

    text: str
    options: tuple[Option, ...]

    @property
    def tools(self) -> tuple[str, ...]:
        """Return the tools the source reads, in order."""
        return tuple(dict.fromkeys(o.tool for o in self.options))


def parse_source(text: str) -> Source:
    """Parse ``text`` (see the module docstring).

    Raises:
        ValueError: ``text`` is not a source; the message quotes the bad part.
    """
    options: list[Option] = []
    for part in text.split("|"):
        match = _OPTION.match(part.strip())
        if match is None:
            msg = f"{part.strip()!r} is not a source like 'tool:path' or '*tool:args'"
            raise InvalidValue(msg)
        every, tool, path, fields = match.groups()
        kept = None
        if fields is not None:
            pairs = [f.strip().partition("=") for f in fields.split(",") if f.strip()]
            kept = tuple((name, origin or name) for name, _, origin in pairs)
        segments = tuple(s for s in path.split(".") if s)
        options.append(Option(every is not None, tool, segments, kept))
    return Source(text, tuple(options))


REQUEST = "request"
"""The source that names the user's latest request (a plan step's argument only)."""
REQUEST_QUOTED = "request:quoted"
"""The one phrase the request quotes before the text it introduces (a plan step's argument
only: ``titled 'Plate tectonics': ...``); missing when it quotes none or several."""
REQUEST_SOURCES = (REQUEST, REQUEST_QUOTED)
"""The sources a plan step's argument may read from the request rather than a tool."""


def from_request(source: str, request: str) -> object:
    """Return the value of a :data:`REQUEST_SOURCES` source for ``request`` (or MISSING)."""
    if source == REQUEST:
        return request
    named = named_by_quote(request)
    return MISSING if named is None else named


def tool_results(trace: Sequence[ReasoningStep], tool: str) -> list[tuple[Any, Any]]:
    """Return (arguments, result data) of every successful call of ``tool``, in order.

    A dry call (its result says ``dry_run``) changed nothing: an answer cannot report it as
    done (the run's decision says what it would have changed).
    """
    found: list[tuple[Any, Any]] = []
    for step in trace:
        if step.kind != "tool" or step.status != "ok" or step.action is None:
            continue
        if step.action.tool != tool:
            continue
        data = result_data(step.action.output)
        if not (isinstance(data, Mapping) and data.get("dry_run")):
            found.append((step.action.input, data))
    return found


def result_data(output: Any) -> Any:
    """Return the payload of a tool's output: ``data`` of a standard result, else the output."""
    if isinstance(output, Mapping) and output.get("status") == "success" and "data" in output:
        return output["data"]
    return output


def _walk(value: Any, path: Sequence[str]) -> Any:
    for index, segment in enumerate(path):
        if segment == "#":
            return len(value) if isinstance(value, list) else MISSING
        if segment == "*":
            if not isinstance(value, list):
                return MISSING
            items = [_walk(item, path[index + 1 :]) for item in value]
            return [item for item in items if item is not MISSING]
        if isinstance(value, list) and segment.isdigit():
            position = int(segment)
            value = value[position] if position < len(value) else MISSING
        elif isinstance(value, Mapping) and segment in value:
            value = value[segment]
        else:
            return MISSING
        if value is MISSING:
            return MISSING
    return value


def _project(value: Any, fields: tuple[tuple[str, str], ...] | None) -> Any:
    if fields is None:
        return value
    if isinstance(value, list):
        return [_project(item, fields) for item in value]
    if not isinstance(value, Mapping):
        return value
    return {name: value[origin] for name, origin in fields if origin in value}


def _option_value(option: Option, trace: Sequence[ReasoningStep]) -> Any:
    calls = tool_results(trace, option.tool)
    if not calls:
        return MISSING
    reads_args = option.path[:1] == ("args",)
    path = option.path[1:] if reads_args else option.path

    def one(call: tuple[Any, Any]) -> Any:
        found = _walk(call[0] if reads_args else call[1], path)
        return found if found is MISSING else _project(found, option.fields)

    if option.every:
        values = [one(call) for call in calls]
        return [v for v in values if v is not MISSING] or MISSING
    return one(calls[-1])


def resolve(source: Source, trace: Sequence[ReasoningStep]) -> Any:
    """Return the value ``source`` names in the run's successful tool results, or MISSING."""
    for option in source.options:
        value = _option_value(option, trace)
        if value is not MISSING:
            return value
    return MISSING
