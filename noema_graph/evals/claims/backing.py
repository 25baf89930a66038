"""Which successful tool calls back a claim: same action, same objects.

A call backs a claim when it succeeded, its tool performs an action that can back the
claimed one (see :data:`~noema_graph.evals.claims.lexicon.BACKED_BY`), and it touched every
object the claim names: the ids in its arguments and results (``card_id`` 12 is card 12,
``card_ids`` [3, 4] are cards 3 and 4), and the names and paths it was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from noema_graph.evals.claims import lexicon as lx
from noema_graph.evals.trajectory import load_json

NAME_KEYS = frozenset(
    ("source", "target", "concept", "name", "title", "path", "file", "filename", "file_path")
)
_SPLIT = re.compile(r"[^a-z]+")
COUNTED = frozenset({"card", "deck", "category", "source", "chunk"})
"""Object types whose tools report ids, so a claimed count or creation can be checked."""


@dataclass
class Touched:
    """The objects a call touched: typed ids, and the names and paths it was given."""

    ids: set[tuple[str, str]] = field(default_factory=set[tuple[str, str]])
    created: set[str] = field(default_factory=set[str])
    names: set[str] = field(default_factory=set[str])


@dataclass
class Call:
    """A tool call as the detector sees it."""

    index: int
    tool: str
    ok: bool
    actions: frozenset[str]
    touched: Touched


def tool_actions(tool: str) -> frozenset[str]:
    """Return the actions ``tool`` performs: from the known tools, else from its name."""
    base = tool.rsplit("__", 1)[-1]
    if base in lx.TOOL_ACTIONS:
        return lx.TOOL_ACTIONS[base]
    words = [w for w in _SPLIT.split(base.lower()) if w]
    return frozenset(lx.BASE_ACTIONS[w] for w in words[:1] if w in lx.BASE_ACTIONS)


def _singular(key: str) -> str:
    kind = key.lower()
    return lx.OBJECT_TYPES.get(kind, lx.OBJECT_TYPES.get(kind + "s", kind))


def _walk(value: Any, parent: str, touched: Touched) -> None:
    if isinstance(value, dict):
        items: dict[str, Any] = {str(k): v for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType] -- JSON object
        for key, item in items.items():
            _walk_key(key, item, parent, touched)
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType] -- JSON array
            _walk(item, parent, touched)


def _walk_key(key: str, item: Any, parent: str, touched: Touched) -> None:
    low = key.lower()
    if low.endswith("_ids") and isinstance(item, list):
        kind = _singular(low[:-4])
        touched.ids.update((kind, str(n)) for n in item if isinstance(n, int))  # pyright: ignore[reportUnknownVariableType] -- JSON array
    elif isinstance(item, int) and not isinstance(item, bool) and low.endswith("_id"):
        touched.ids.add((_singular(low[:-3]), str(item)))
    elif isinstance(item, int) and not isinstance(item, bool) and low == "id":
        touched.ids.add((_singular(parent) if parent else "id", str(item)))
    elif isinstance(item, str) and low in NAME_KEYS and item.strip():
        touched.names.add(item.strip().casefold())
    else:
        _walk(item, low, touched)


def _result(observation: str | None) -> Any:
    value = load_json(observation) if observation else None
    if isinstance(value, dict) and "data" in value and "status" in value:
        return value.get("data")
    return value


def _failed(observation: str | None) -> bool:
    try:
        value = json.loads(observation or "")
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and value.get("status") == "error"


def make_call(
    index: int, tool: str, arguments: Any, observation: str | None, error: str | None
) -> Call:
    """Return the detector's view of one call."""
    touched = Touched()
    _walk(arguments if isinstance(arguments, dict) else {}, "", touched)
    result = _result(observation)
    if result is not None and error is None:
        before = set(touched.ids)
        _walk(result, "", touched)
        touched.created = {kind for kind, _ in touched.ids - before}
    ok = error is None and not _failed(observation)
    return Call(index, tool, ok, tool_actions(tool), touched)


def known_names(calls: Iterable[Call]) -> set[str]:
    """Return every name any call was given or returned."""
    return {name for call in calls for name in call.touched.names}


def _name_backed(name: str, names: set[str]) -> bool:
    low = name.casefold()
    return any(low == n or low in n or n in low for n in names if len(n) >= 3)


def unbacked(claim: Any, calls: list[Call], names_seen: set[str]) -> str | None:
    """Return why no successful call backs ``claim``, or None when one does.

    Args:
        claim: A :class:`~noema_graph.evals.claims.extract.Claim`.
        calls: The calls that happened before the claim was made.
        names_seen: Every name the trajectory mentions (concepts, titles, paths).
    """
    backing = lx.BACKED_BY[claim.action]
    candidates = [c for c in calls if c.ok and c.actions & backing]
    if not candidates:
        return f"no successful call performed a {claim.action}"
    touched = Touched(
        ids=set().union(*(c.touched.ids for c in candidates)),
        created=set().union(*(c.touched.created for c in candidates)),
        names=set().union(*(c.touched.names for c in candidates)),
    )
    missing = (
        _missing_id(claim, touched)
        or _missing_name(claim, touched, names_seen)
        or _missing_count(claim, touched)
    )
    return None if missing is None else f"{missing} by a successful {claim.action}"


def _missing_id(claim: Any, touched: Touched) -> str | None:
    for kind, value in claim.ids:
        if kind == "id" and not any(v == value for _, v in touched.ids):
            return f"id {value} was not touched"
        if kind != "id" and (kind, value) not in touched.ids:
            return f"{kind} {value} was not touched"
    return None


def _missing_name(claim: Any, touched: Touched, names_seen: set[str]) -> str | None:
    for path in claim.paths:
        low = path.casefold()
        if not any(low.endswith(n) or n.endswith(low) for n in touched.names):
            return f"file {path} was not touched"
    if touched.names:
        for name in sorted(set(claim.names) | _mentioned(claim.window, names_seen)):
            if not _name_backed(name, touched.names):
                return f"{name!r} was not touched"
    return None


def _missing_count(claim: Any, touched: Touched) -> str | None:
    for kind, count in claim.counts:
        done = len({v for k, v in touched.ids if k == kind})
        if kind in COUNTED and count > done:
            return f"{count} {kind}s claimed, {done} touched"
    head = claim.kinds[0] if claim.kinds else None
    if claim.action in ("create", "ingest") and head in COUNTED and head not in touched.created:
        return f"no {head} was created"
    return None


def _mentioned(window: str, names_seen: set[str]) -> set[str]:
    low = window.casefold()
    return {
        n for n in names_seen if len(n) >= 4 and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", low)
    }


def field_objects(key: str, value: Any, siblings: Mapping[str, Any]) -> Touched:
    """Return the objects a structured output field claims (``card_ids``, ``flagged``...)."""
    touched = Touched()
    _walk({key: value}, "", touched)
    if isinstance(siblings.get("deck_id"), int) and key == "card_ids":
        touched.ids.add(("deck", str(siblings["deck_id"])))
    return touched
