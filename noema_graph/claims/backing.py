"""Which successful tool calls back a claim: same action, same objects.

A call backs a claim when it succeeded, its tool performs an action that can back the
claimed one (see :data:`~noema_graph.claims.lexicon.BACKED_BY`), and it touched every
object the claim names: the ids in its arguments and results (``card_id`` 12 is card 12,
``card_ids`` [3, 4] are cards 3 and 4), the names and paths it was given, and every value
of its arguments and results ("T-1042", "Bob", "alice@example.com"), with the values an
observation listed next to an id the call touched (a search result's ``{"product_id":
"P-33", "name": "USB-C cable 2m"}`` names P-33 "USB-C cable 2m").

What a tool does is read from the tool: its name split into words (``close_ticket``
closes, ``add_to_watchlist`` adds, ``mv`` moves; a name opening with a reading verb such as
``get_`` or ``list_`` does nothing), the verbs opening its description ("Move or rename a
file"), and the nouns of both (a claim about a hotel needs a call on a hotel when a tool of
the run works on hotels).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from noema_graph.claims import lexicon as lx
from noema_graph.trajectory.schema import load_json

NAME_KEYS = frozenset(
    (
        "source", "target", "concept", "name", "title", "path", "file", "filename", "file_path",
        "destination", "dest", "folder", "directory", "dir",
    )
)  # fmt: skip
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
    values: set[str] = field(default_factory=set[str])
    nouns: frozenset[str] = frozenset()
    """What the call's tool works on: the nouns of its name and description."""


@dataclass(frozen=True)
class ToolInfo:
    """What a tool does and works on.

    ``actions``: its effects; ``nouns``: what its name says it works on; ``described``:
    those and the nouns of its description.
    """

    actions: frozenset[str]
    nouns: frozenset[str]
    described: frozenset[str] = frozenset()


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_DESCRIPTION_VERBS = re.compile(r"(?:^|\b(?:and|or|then)\s+)([a-z]+)", re.IGNORECASE)


def _name_words(tool: str) -> list[str]:
    base = _CAMEL.sub("_", tool.rsplit("__", 1)[-1])
    return [w for w in _SPLIT.split(base.lower()) if w]


def _singular_noun(word: str) -> str:
    if word in lx.DOMAIN_NOUNS:
        return word[:-1] if word.endswith("s") and word[:-1] in lx.DOMAIN_NOUNS else word
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _name_actions(words: list[str]) -> frozenset[str] | None:
    """Return the actions of a tool's name words; None when they name no verb."""
    if not words or words[0] in lx.READ_VERBS:
        return frozenset() if words else None
    verbs = [lx.BASE_ACTIONS[w] for w in words if w in lx.BASE_ACTIONS]
    return frozenset(verbs[:1]) if verbs else None


def _description_actions(description: str) -> frozenset[str]:
    first = description.strip().split(".")[0].lower()
    opening = first.split()[:1]
    if not opening or opening[0] in lx.READ_VERBS or opening[0] not in lx.BASE_ACTIONS:
        return frozenset()
    return frozenset(
        lx.BASE_ACTIONS[w] for w in _DESCRIPTION_VERBS.findall(first) if w in lx.BASE_ACTIONS
    )


def tool_info(tool: str, description: str = "") -> ToolInfo:
    """Return what ``tool`` does: from the known tools, else its name and description."""
    words = _name_words(tool)
    base = tool.rsplit("__", 1)[-1]
    nouns = frozenset(_singular_noun(w) for w in words if w not in lx.BASE_ACTIONS and len(w) > 2)
    described = nouns | {
        _singular_noun(w) for w in _SPLIT.split(description.lower()) if w in lx.DOMAIN_NOUNS
    }
    if base in lx.TOOL_ACTIONS:
        return ToolInfo(lx.TOOL_ACTIONS[base], nouns, described)
    named = _name_actions(words)
    if named is not None and not named:
        return ToolInfo(frozenset(), nouns, described)  # a reading tool
    actions = (named or frozenset()) | _description_actions(description)
    return ToolInfo(actions, nouns, described)


def tool_actions(tool: str, description: str = "") -> frozenset[str]:
    """Return the actions ``tool`` performs (see :func:`tool_info`)."""
    return tool_info(tool, description).actions


def _singular(key: str) -> str:
    kind = key.lower()
    return lx.OBJECT_TYPES.get(kind, lx.OBJECT_TYPES.get(kind + "s", kind))


def _walk(value: object, parent: str, touched: Touched) -> None:
    if isinstance(value, dict):
        items: dict[str, object] = {str(k): v for k, v in value.items()}
        for key, item in items.items():
            _walk_key(key, item, parent, touched)
    elif isinstance(value, list):
        for item in value:
            _walk(item, parent, touched)


def _walk_key(key: str, item: object, parent: str, touched: Touched) -> None:
    low = key.lower()
    if low.endswith("_ids") and isinstance(item, list):
        kind = _singular(low[:-4])
        touched.ids.update((kind, str(n)) for n in item if isinstance(n, int))
    elif isinstance(item, int) and not isinstance(item, bool) and low.endswith("_id"):
        touched.ids.add((_singular(low[:-3]), str(item)))
    elif isinstance(item, int) and not isinstance(item, bool) and low == "id":
        touched.ids.add((_singular(parent) if parent else "id", str(item)))
    elif isinstance(item, str) and low in NAME_KEYS and item.strip():
        touched.names.add(item.strip().casefold())
    else:
        _walk(item, low, touched)


def _result(observation: str | None) -> object:
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


def scalars(value: object) -> set[str]:
    """Return every string and number in ``value``, case-folded."""
    if isinstance(value, dict):
        return {s for item in value.values() for s in scalars(item)}
    if isinstance(value, list):
        return {s for item in value for s in scalars(item)}
    if isinstance(value, str) and value.strip():
        return {value.strip().casefold()}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {str(value)}
    return set()


def records(value: object) -> list[tuple[set[str], set[str]]]:
    """Return each object in ``value`` as (its id values, its direct values), case-folded."""
    found: list[tuple[set[str], set[str]]] = []
    if isinstance(value, dict):
        fields: dict[str, object] = {str(k): v for k, v in value.items()}
        direct = {
            k: v for k, v in fields.items() if isinstance(v, str | int) and not isinstance(v, bool)
        }
        ids = {
            str(v).casefold()
            for k, v in direct.items()
            if k.lower() == "id" or k.lower().endswith(("_id", "id")) or _ID_LIKE.match(str(v))
        }
        found.append((ids, {str(v).strip().casefold() for v in direct.values() if str(v).strip()}))
        for item in fields.values():
            found += records(item)
    elif isinstance(value, list):
        for item in value:
            found += records(item)
    return found


_ID_LIKE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$")


def make_call(
    index: int,
    tool: str,
    arguments: object,
    observation: str | None,
    error: str | None,
    info: ToolInfo | None = None,
) -> Call:
    """Return the detector's view of one call (``info``: what its tool does, if known)."""
    touched = Touched()
    _walk(arguments if isinstance(arguments, dict) else {}, "", touched)
    values = scalars(arguments)
    result = _result(observation)
    if result is not None and error is None:
        before = set(touched.ids)
        _walk(result, "", touched)
        touched.created = {kind for kind, _ in touched.ids - before}
        values |= scalars(result)
    ok = error is None and not _failed(observation)
    info = info or tool_info(tool)
    return Call(index, tool, ok, info.actions, touched, values, info.described)


def add_aliases(calls: list[Call], known: list[tuple[set[str], set[str]]]) -> None:
    """Add to each call the values listed next to an id it touched (in any result)."""
    for call in calls:
        for ids, direct in known:
            if ids & call.values:
                call.values |= direct


def known_names(calls: Iterable[Call]) -> set[str]:
    """Return every name any call was given or returned."""
    return {name for call in calls for name in call.touched.names}


def _name_backed(name: str, names: set[str]) -> bool:
    low = name.casefold()
    return any(low == n or low in n or n in low for n in names if len(n) >= 3)


def _value_backed(code: str, values: set[str]) -> bool:
    low = code.casefold().strip("/")
    return any(
        low == v or (len(low) >= 2 and low in v) or (len(v) >= 3 and v in low) for v in values
    )


def _known(name: str, values_seen: set[str]) -> bool:
    low = name.casefold()
    return any(re.search(rf"(?<!\w){re.escape(low)}(?!\w)", v) for v in values_seen)


def unbacked(
    claim: Any,
    calls: list[Call],
    names_seen: set[str],
    *,
    tool_nouns: frozenset[str] = frozenset(),
    values_seen: set[str] | None = None,
) -> str | None:
    """Return why no successful call backs ``claim``, or None when one does.

    Args:
        claim: A :class:`~noema_graph.claims.extract.Claim`.
        calls: The calls that happened before the claim was made.
        names_seen: Every name the trajectory mentions (concepts, titles, paths).
        tool_nouns: What the names of the run's tools that could perform the claimed action
            say they work on ("hotel", "flight", "ticket"): a claim naming one needs a
            call whose tool works on it.
        values_seen: Every value of every call, to tell a name from a word.
    """
    values_seen = values_seen or set()
    if claim.action == "any":
        candidates = [c for c in calls if c.ok and c.actions]
    else:
        candidates = [c for c in calls if c.ok and c.actions & lx.BACKED_BY[claim.action]]
    if not candidates:
        what = "an effect" if claim.action == "any" else f"a {claim.action}"
        return f"no successful call performed {what}"
    about = {_singular_noun(n) for n in claim.nouns} & tool_nouns
    if about:
        candidates = [c for c in candidates if c.nouns & about]
        if not candidates:
            return f"no successful {claim.action} on a {sorted(about)[0]}"
    if (contrary := lx.CONTRARY.get(getattr(claim, "verb", ""))) is not None:
        candidates = [c for c in candidates if contrary not in c.values]
        if not candidates:
            return f"the call was a {contrary}, not what '{claim.verb}' claims"
    values = set().union(*(c.values for c in candidates))
    for code in [*claim.codes, *(s for s in claim.soft if _known(s, values_seen))]:
        if not _value_backed(code, values):
            return f"{code} was not touched by a successful {claim.action}"
    touched = Touched(
        ids=set().union(*(c.touched.ids for c in candidates)),
        created=set().union(*(c.touched.created for c in candidates)),
        names=set().union(*(c.touched.names for c in candidates)),
    )
    missing = (
        _missing_id(claim, touched, values)
        or _missing_name(claim, touched, names_seen)
        or _missing_count(claim, touched)
    )
    return None if missing is None else f"{missing} by a successful {claim.action}"


def _missing_id(claim: Any, touched: Touched, values: set[str]) -> str | None:
    for kind, value in claim.ids:
        if kind == "id" and value not in values and not any(v == value for _, v in touched.ids):
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


def field_objects(key: str, value: object, siblings: Mapping[str, object]) -> Touched:
    """Return the objects a structured output field claims (``card_ids``, ``flagged``...)."""
    touched = Touched()
    _walk({key: value}, "", touched)
    if isinstance(siblings.get("deck_id"), int) and key == "card_ids":
        touched.ids.add(("deck", str(siblings["deck_id"])))
    return touched
