"""Values a request writes for an argument whose options are fixed (a link's ``kind``).

The domain allows some values and no others: a value the request writes that is not one of
them is refused, never replaced by an allowed one. :func:`unallowed_value` finds the values
a request writes for such an argument, in English, French and Spanish:

* an identifier (``reacts_with``) that is no option, argument or tool name;
* the word after the argument's name or one of its words (``of kind cause``, ``de type
  'cause'``, ``del tipo causa``, ``severity critical``);
* quoted text, when every text argument of the tool is a reference or has options: quoted
  words are then either a record the request names or a value.

A written value matches an option folded, with spaces for underscores, or as its start
(``related`` for ``related_to``, ``prerequis`` for ``prerequisite_of``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from noema_graph.agents.references import fold
from noema_graph.grounding.arguments import references

_IDENTIFIER = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")
_QUOTED = re.compile(r"""(?<!\w)'([^']*)'(?!\w)|"([^"]*)"|«([^»]*)»""")
_KIND_WORDS = ("kind", "type", "sort", "tipo", "clase", "genre", "sorte")
ARGUMENT_WORDS: dict[str, tuple[str, ...]] = {
    "kind": _KIND_WORDS,
    "type": _KIND_WORDS,
    "severity": ("severity", "gravite", "severite", "severidad", "gravedad"),
}
"""Words (folded) that name an argument with options, by the argument's name, three languages."""
_NO_VALUE = frozenset(
    """
    of the a an this that which what link links de du des le la les un une ce cette lien
    liens del el los las uno una este esta enlace vinculo is es est
    """.split()  # noqa: SIM905 -- a word list reads best as words
)
"""Words after an argument's name that do not give its value (``the kind of link``)."""


def _options_by_argument(schema: Mapping[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    defs: Mapping[str, Any] = schema.get("$defs") or {}
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, Mapping):
            continue
        branches: list[Any] = [sub, *(sub.get("anyOf") or [])]
        ref = sub.get("$ref")
        if isinstance(ref, str):
            branches.append(defs.get(ref.rsplit("/", 1)[-1]))
        for branch in branches:
            if isinstance(branch, Mapping) and isinstance(branch.get("enum"), list):
                found.setdefault(str(name), []).extend(str(o) for o in branch["enum"])
    return found


def allows(written: str, options: Iterable[str]) -> bool:
    """Return whether ``written`` is one of ``options`` (folded, spaced, or their start)."""
    value = fold(written).strip().replace(" ", "_").replace("-", "_")
    if not value:
        return True
    return any(
        value == o or (len(value) >= 4 and o.startswith(value))
        for o in (fold(option) for option in options)
    )


def _free_text(schema: Mapping[str, Any], options: Collection[str]) -> bool:
    refs = references(schema)
    return any(
        isinstance(sub, Mapping)
        and sub.get("type") == "string"
        and name not in refs
        and name not in options
        for name, sub in (schema.get("properties") or {}).items()
    )


def written_values(text: str, schema: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """Return the values ``text`` writes for ``schema``'s arguments with options.

    ``names``: the records the request names (quoted, they are no values).
    """
    options = _options_by_argument(schema)
    if not options:
        return []
    folded = fold(text)
    found = [w for w in _IDENTIFIER.findall(folded) if w not in schema.get("properties", {})]
    for argument in options:
        words = ARGUMENT_WORDS.get(argument, (fold(argument),))
        pattern = rf"\b(?:{'|'.join(map(re.escape, words))})\s*[:=]?\s*['\"«]?([\w-]+)"
        for match in re.finditer(pattern, folded):
            if match.group(1) not in _NO_VALUE:
                found.append(match.group(1))
    if not _free_text(schema, options):
        named = {fold(n) for n in names}
        for match in _QUOTED.finditer(text):
            quoted = fold(next(g for g in match.groups() if g is not None)).strip()
            if quoted and quoted not in named and len(quoted.split()) <= 3:
                found.append(quoted)
    return list(dict.fromkeys(found))


def unallowed_value(
    text: str, schema: Mapping[str, Any], names: Iterable[str], tools: Collection[str] = ()
) -> tuple[str, list[str]] | None:
    """Return the first value ``text`` writes that no option allows, with the options."""
    options = _options_by_argument(schema)
    allowed = [o for values in options.values() for o in values]
    for written in written_values(text, schema, names):
        if written in tools:  # a tool's name is no value
            continue
        if not allows(written, allowed):
            return written, allowed
    return None
