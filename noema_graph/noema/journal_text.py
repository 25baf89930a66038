"""Readable lines for journaled changes: ``card 5: category Capitals -> Geography``.

Ids that point at a named row (a category, deck, concept or learner) are shown by name,
looked up in the store, else in the journal itself (a concept the undo removed again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from noema_graph.noema.journal import Change, label
from noema_graph.storage.sql.driver import Op, fetch_all

_NAMED = {"categories": "name", "decks": "name", "users": "name", "concepts": "name"}
_REFERENCES: dict[str, tuple[str, str]] = {
    "category_id": ("categories", "category"),
    "parent_id": ("categories", "parent"),
    "deck_id": ("decks", "deck"),
    "user_id": ("users", "learner"),
    "concept_id": ("concepts", "concept"),
    "source_id": ("concepts", "source"),
    "target_id": ("concepts", "target"),
}
_HIDDEN = {"updated_at", "created_at", "id"}
Names = dict[tuple[str, int], str]


def _reference(table: str, column: str) -> tuple[str, str] | None:
    if column == "source_id" and table == "chunks":
        return None
    return _REFERENCES.get(column)


def _wanted(changes: Sequence[Change]) -> dict[str, set[int]]:
    wanted: dict[str, set[int]] = {}
    for change in changes:
        for values in (change.before, change.after):
            for column, value in (values or {}).items():
                ref = _reference(change.table, column)
                if ref is not None and isinstance(value, int):
                    wanted.setdefault(ref[0], set()).add(value)
    return wanted


def _names(changes: Sequence[Change]) -> Op[Names]:
    names: Names = {}
    for change in changes:  # rows the journal saw, even if gone now
        if change.table in _NAMED:
            for values in (change.before, change.after):
                if values and "id" in values:
                    names[change.table, int(values["id"])] = str(values[_NAMED[change.table]])
    for table, ids in _wanted(changes).items():
        listed = sorted(ids)
        for start in range(0, len(listed), 500):
            chunk = listed[start : start + 500]
            rows = yield from fetch_all(
                f"SELECT id, name FROM {table} WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,  # table: a constant of _REFERENCES
            )
            names.update({(table, int(r["id"])): str(r["name"]) for r in rows})
    return names


def _value(table: str, column: str, value: object, names: Names) -> str:
    ref = _reference(table, column)
    if value is None:
        return "none"
    if ref is not None and isinstance(value, int):
        return names.get((ref[0], value), f"#{value}")
    if column == "card_id":
        return str(value)
    if isinstance(value, str):
        short = value if len(value) <= 40 else value[:39] + "…"
        return repr(short) if column in ("front", "back", "text", "reason", "tags") else short
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _column(table: str, column: str) -> str:
    if column == "card_id":
        return "card"
    ref = _reference(table, column)
    return ref[1] if ref is not None else column


def _summary(table: str, row: Mapping[str, object], names: Names) -> str:
    shown = [
        f"{_column(table, c)} {_value(table, c, v, names)}"
        for c, v in row.items()
        if c not in _HIDDEN and v is not None
    ]
    return ", ".join(shown[:4])


def describe(change: Change, names: Names) -> str:
    """Return one readable line for ``change`` (a dry run's says "would")."""
    name = label(change.table, change.key)
    would = "would " if change.dry_run else ""
    if change.action == "update":
        before, after = change.before or {}, change.after or {}
        moved = [
            f"{_column(change.table, c)} {_value(change.table, c, before.get(c), names)}"
            f" -> {_value(change.table, c, v, names)}"
            for c, v in after.items()
            if before.get(c) != v and c not in ("updated_at",)
        ]
        text = f"{name}: {would}{'change ' if would else ''}{', '.join(moved) or 'touched'}"
    elif change.action == "insert":
        verb = "would create" if would else "created"
        text = f"{name}: {verb} ({_summary(change.table, change.after or {}, names)})"
    else:
        verb = "would delete" if would else "deleted"
        text = f"{name}: {verb} ({_summary(change.table, change.before or {}, names)})"
    if change.undone_by is not None and not change.dry_run:
        text += f" [undone by {change.undone_by}]"
    return text


def readable(changes: Sequence[Change]) -> Op[list[Change]]:
    """Return ``changes`` with their ``text`` filled in."""
    names = yield from _names(changes)
    return [c.model_copy(update={"text": describe(c, names)}) for c in changes]
