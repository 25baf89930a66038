"""Reference arguments: ids and names a tool call takes from what the run has seen.

A tool's argument schema says which arguments are references and to what kind of record:
an integer argument named ``<kind>_id`` refers to ``<kind>`` records (``card_id`` -> cards,
``category_id`` -> categories); the property key :data:`REF_KEY` names the kind explicitly
(``{"x-noema-ref": "concept"}`` on a string argument that takes a concept's name) or, set
to ``false``, opts an argument out.

:func:`step_arguments` narrows one tool's argument schema for the turn at hand: optional
arguments are offered only when the plan step or the request gives a value for them, a
reference admits only the values seen (the request's own first, then the tool results'),
and arguments with a single possible value are determined. The embedded model's grammar is
built from that schema, so it cannot send a value the run has not seen; a step whose
arguments are all determined needs no model at all. :func:`unseen_reference` checks a call
a remote model made against the same values, before the tool runs.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from noema_graph.grounding.seen import NOUNS, Seen, mentioned, referred, seen_in, singular
from noema_graph.grounding.words import fold

REF_KEY = "x-noema-ref"
"""Argument-schema key naming the kind of record an argument refers to (false: none)."""


def _admits(schema: Mapping[str, Any], kind: str) -> bool:
    declared = schema.get("type")
    if declared == kind or (isinstance(declared, list) and kind in declared):
        return True
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    return any(isinstance(b, Mapping) and _admits(b, kind) for b in branches)


def references(schema: Mapping[str, Any]) -> dict[str, str]:
    """Return ``{argument: kind}`` for the reference arguments of an argument schema."""
    found: dict[str, str] = {}
    properties: Mapping[str, Any] = schema.get("properties") or {}
    for name, sub in properties.items():
        if not isinstance(sub, Mapping):
            continue
        if REF_KEY in sub:
            if sub[REF_KEY]:
                found[name] = singular(str(sub[REF_KEY]))
        elif name.endswith("_id") and _admits(sub, "integer"):
            found[name] = singular(name[:-3])
    return found


def _takes_names(schema: Mapping[str, Any]) -> bool:
    return _admits(schema, "string") and not _admits(schema, "integer")


def named_in(request: str, argument: str) -> bool:
    """Return whether ``request`` names ``argument`` (its words: ``window_days`` -> window days)."""
    words = r"[\s_-]+".join(re.escape(w) for w in argument.lower().split("_") if w)
    return bool(words) and re.search(rf"\b{words}\b", request.lower()) is not None


def candidates(
    kind: str, by_name: bool, request: str, asked: Seen, seen: Seen, wanted: int = 1
) -> list[Any]:
    """Return the values a reference of ``kind`` may take, the most likely first.

    The request's own ids of that kind, else the seen records whose name the request
    mentions, else everything seen of that kind (empty: nothing seen, the value is free).
    """
    if by_name:
        names = list(seen.names.get(kind, {}))
        return referred(request, names, kind, wanted) or names
    ids = seen.ids.get(kind, {})
    own = [value for value in asked.ids.get(kind, {}) if value in ids or not ids]
    if own:
        return own
    labelled = {label: value for value, label in ids.items() if label}
    named = [labelled[name] for name in referred(request, list(labelled), kind, wanted)]
    return named or list(ids)


@dataclass(frozen=True)
class StepArguments:
    """A tool's argument schema narrowed for one turn, and the values it determines."""

    schema: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict[str, Any])

    @property
    def complete(self) -> bool:
        """Return whether every offered argument is determined (no model needed)."""
        return set(self.schema.get("properties") or {}) <= set(self.values)


def _single(schema: Mapping[str, Any]) -> tuple[bool, Any]:
    if "const" in schema:
        return True, schema["const"]
    options = schema.get("enum")
    if isinstance(options, list) and len(options) == 1:
        return True, options[0]
    return False, None


def step_arguments(
    schema: Mapping[str, Any],
    request: str,
    seen: Seen,
    *,
    asked: Seen | None = None,
    given: Mapping[str, Any] | None = None,
    keep: Collection[str] | None = None,
) -> StepArguments:
    """Return ``schema`` narrowed to what this turn can ground, and the values it determines.

    Args:
        schema: The tool's argument schema (a JSON object schema).
        request: The user's request.
        seen: What the request and the run's tool results hold.
        asked: What the request alone holds (default: read from ``request``).
        given: Values the plan step fixes (already resolved from their sources).
        keep: Optional arguments to offer; None offers those the request names. A default
            plan's step passes the arguments it lists.
    """
    asked = seen_in(request) if asked is None else asked
    given = dict(given or {})
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required: set[str] = set(schema.get("required") or ())
    offered = [
        name
        for name in properties
        if name in required
        or name in given
        or (name in keep if keep is not None else named_in(request, name))
    ]
    narrowed = {name: dict(properties[name]) for name in offered}
    values = {name: given[name] for name in offered if name in given}
    _ground_references(schema, offered, narrowed, values, (request, asked, seen))
    for name in offered:
        if name not in values and (chosen := _mentioned_options(narrowed[name], request)):
            narrowed[name] = {**narrowed[name], "enum": chosen}
        single, value = _single(narrowed[name])
        if single and name not in values:
            values[name] = value
    for name, value in values.items():
        narrowed[name] = {**_annotations(narrowed[name]), "const": value}
    text_limit = max(FREE_TEXT_CHARS, len(request))
    for name in offered:
        if name not in values:
            nested = _seen_only(narrowed[name], request, seen)
            narrowed[name] = bounded(nested, requested_count(request, name), text_limit)
    defs = schema.get("$defs")
    result = {
        **schema,
        "properties": narrowed,
        "required": [n for n in offered if n in required],
        **(
            {
                "$defs": {
                    k: bounded(_seen_only(v, request, seen), text=text_limit)
                    for k, v in defs.items()
                }
            }
            if isinstance(defs, Mapping)
            else {}
        ),
    }
    return StepArguments(schema=result, values=values)


def _seen_only(schema: object, request: str, seen: Seen) -> object:
    """Return a nested object's schema without the optional arguments nothing asked for.

    An optional argument is kept when the request names it, when it is a reference of a
    kind the run has seen, or when the request names one of its options; else it is not
    offered, as an optional top-level argument the request does not name is not: a card
    to create with no category in the request or the tool results has no category id (a
    small model filled it with digits of its own), no concepts (it created one named after
    the request) and keeps the default kind.
    """
    if not isinstance(schema, Mapping):
        return schema
    if isinstance(items := schema.get("items"), Mapping):  # a list of such objects
        return {**schema, "items": _seen_only(items, request, seen)}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return schema
    required: set[str] = set(schema.get("required") or ())
    refs = references(schema)
    unmade = {
        name
        for name, sub in properties.items()
        if name not in required
        and not named_in(request, name)
        and not (name in refs and (seen.ids.get(refs[name]) or seen.names.get(refs[name])))
        and not (isinstance(sub, Mapping) and _mentioned_options(sub, request))
    }
    if not unmade:
        return schema
    return {**schema, "properties": {k: v for k, v in properties.items() if k not in unmade}}


def _ground_references(
    schema: Mapping[str, Any],
    offered: list[str],
    narrowed: dict[str, dict[str, Any]],
    values: dict[str, Any],
    context: tuple[str, Seen, Seen],
) -> None:
    """Narrow (in place) each offered reference to its candidates, or fix it when they fit.

    ``context`` is the request, what it holds, and what the run has seen. Several references
    of one kind with exactly as many candidates take them in order of mention.
    """
    request, asked, seen = context
    properties: Mapping[str, Any] = schema.get("properties") or {}
    refs = references(schema)
    by_kind: dict[str, list[str]] = {}
    for name in offered:
        if name in refs and name not in values:
            by_kind.setdefault(refs[name], []).append(name)
    for kind, names in by_kind.items():
        by_name = _takes_names(properties[names[0]])
        options = candidates(kind, by_name, request, asked, seen, len(names))
        if options and len(options) == len(names) and len(names) > 1:
            values.update(zip(names, options, strict=True))  # in order of mention
            continue
        for name in names:
            if options:
                narrowed[name] = {**_annotations(narrowed[name]), "enum": options}


FREE_TEXT_CHARS = 300
"""Most characters of a string argument whose schema sets no ``maxLength`` (for decoding)."""
FREE_ITEMS = 8
"""Most items of an array argument when neither its schema nor the request bounds it lower."""
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve",
    "zero une deux trois quatre cinq six sept huit neuf dix onze douze",
    "cero una dos tres cuatro cinco seis siete ocho nueve diez once doce",
)
"""Number words of English, French and Spanish, by value (``un``/``uno`` are added)."""
_COUNTS = {word: n for line in _NUMBERS for n, word in enumerate(line.split(" "))} | {
    "un": 1,
    "uno": 1,
}


def requested_count(request: str, argument: str) -> int | None:
    """Return how many items of an array argument the request asks for (``two cards``).

    The count is a number or a number word of the three languages before the argument's
    noun or one of its translations (:data:`~noema_graph.grounding.seen.NOUNS`), one word
    between them at most (``deux nouvelles cartes``); accents are left out.
    """
    noun = singular(argument)
    nouns = "|".join(re.escape(n) for n in NOUNS.get(noun, (noun,)))
    pattern = rf"\b(\d{{1,3}}|{'|'.join(_COUNTS)})\s+(?:\w+\s+)?(?:{nouns})(?:e?s)?\b"
    found = re.search(pattern, fold(request))
    if found is None:
        return None
    word = found.group(1)
    return int(word) if word.isdigit() else _COUNTS[word]


def bounded(schema: Any, count: int | None = None, text: int = FREE_TEXT_CHARS) -> Any:
    """Return ``schema`` with free text and lists bounded for decoding, recursively.

    A string gets at most ``text`` characters (:data:`FREE_TEXT_CHARS`, or the request's
    length when that is longer: text a call copies comes from the request), or its own
    ``maxLength`` when lower; an array gets ``count``
    items exactly when the request says how many, else at most :data:`FREE_ITEMS` (or its own
    lower bound). A small model otherwise rambles inside a string or a list until its token
    limit and leaves JSON that does not parse. Only the grammar sees this schema: the tool's
    own schema still validates the call.
    """
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = dict(schema)
    if out.get("type") == "string" and not ({"enum", "const", "format"} & out.keys()):
        own = out.get("maxLength")
        out["maxLength"] = min(own, text) if isinstance(own, int) else text
    if out.get("type") == "array":
        low, high = int(out.get("minItems", 0)), out.get("maxItems")
        if count is not None and low <= count and (high is None or count <= high):
            out["minItems"] = out["maxItems"] = count
        else:
            out["maxItems"] = min(high, FREE_ITEMS) if isinstance(high, int) else FREE_ITEMS
            out["maxItems"] = max(out["maxItems"], low)
        out["items"] = bounded(out.get("items"), text=text)
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: bounded(v, text=text) for k, v in out["properties"].items()}
    for key in ("anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            out[key] = [bounded(branch, text=text) for branch in out[key]]
    return out


def _mentioned_options(schema: Mapping[str, Any], request: str) -> list[Any]:
    """Return the string options of an enum the request names (``contrasts_with``), if any."""
    options = schema.get("enum")
    if not isinstance(options, list):
        return []
    texts = [o for o in options if isinstance(o, str)]
    spelled = {o.replace("_", " "): o for o in texts} | {o: o for o in texts}
    return list(dict.fromkeys(spelled[m] for m in mentioned(request, list(spelled))))


def _annotations(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return the descriptive keys of a property schema (its type constraints dropped)."""
    return {k: v for k, v in schema.items() if k in ("title", "description", REF_KEY)}


def unseen_reference(
    tool: str, schema: Mapping[str, Any], args: Mapping[str, Any], seen: Seen, request: str = ""
) -> str | None:
    """Return the error observation for a reference argument the run has not seen, else None.

    Only kinds with seen values are checked: with none seen, the tool itself decides. A name
    the request mentions counts as seen.
    """
    for name, kind in references(schema).items():
        if name not in args or args[name] is None:
            continue
        value = args[name]
        known: list[Any] = (
            list(seen.names.get(kind, {}))
            if isinstance(value, str)
            else list(seen.ids.get(kind, {}))
        )
        if isinstance(value, str) and mentioned(request, [value]):
            continue
        if known and value not in known:
            shown = ", ".join(map(repr, known[:20])) + (", ..." if len(known) > 20 else "")
            return (
                f"Invalid argument {name!r} for tool {tool!r}: {value!r} is no {kind} this run "
                f"has seen (seen: {shown}). Fix: use one of them, or first call a tool that "
                f"returns {kind} records."
            )
    return None
