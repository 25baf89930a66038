"""The store's end state, as tau2-bench grades it: what a run changed, against what it should.

:func:`store_changes` compares an item's copy of the store after its run with the master
copy it was made from (the master is attached read-only; one ``EXCEPT`` each way per table,
rows keyed by their primary key, else their rowid). Tables that record history rather than
the learner's data are not counted: :data:`~noema_graph.noema.schema.HISTORY_TABLES`, every
full-text (virtual) table and the shadow tables SQLite names after it (``cards_fts_*``).

:func:`judge_state` matches the changes with an item's ``expected_state``: a changed row
must hold the expected values (its columns named ``*_at``, timestamps, may change too; any
other column changing that the expectation does not name is unasked); ``count`` new rows
(a number, or operators such as ``{"$gte": 0}``) must hold the expected values; a deleted
row must be gone. Every change left over is unasked and fails the item whatever its answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.evals.expectations import Expectations, RowExpectation, counted_tables
from noema_graph.evals.scorers import subset_score

CHANGES_KEPT = 500
"""At most this many changes are recorded per run (the count is always exact)."""


class Change(BaseModel):
    """One row that differs between the master store and the run's copy."""

    model_config = ConfigDict(frozen=True)

    table: str
    kind: str = Field(description="changed | new | deleted")
    key: dict[str, object]
    before: dict[str, object] | None = None
    after: dict[str, object] | None = None


class StateVerdict(BaseModel):
    """How the run's changes compare with the item's expectations."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    unexpected: list[dict[str, object]] = Field(
        default_factory=list[dict[str, object]], description="Changes no expectation asked for."
    )
    missing: list[dict[str, object]] = Field(
        default_factory=list[dict[str, object]], description="Expectations no change met."
    )


def _key_columns(connection: sqlite3.Connection, table: str) -> tuple[list[str], list[str]]:
    """Return (primary-key columns, all columns) of ``table``; no key: ``rowid``."""
    info = connection.execute(f'PRAGMA master.table_info("{table}")').fetchall()
    columns = [str(row[1]) for row in info]
    keys = [str(row[1]) for row in sorted(info, key=lambda r: r[5]) if row[5]]
    return (keys or ["rowid"]), columns


def _table_changes(connection: sqlite3.Connection, table: str) -> list[Change]:
    keys, columns = _key_columns(connection, table)
    names = (["rowid"] if keys == ["rowid"] else []) + columns
    select = ", ".join(f'"{c}"' if c != "rowid" else "rowid" for c in names)

    def only_in(first: str, second: str) -> dict[tuple[object, ...], dict[str, object]]:
        sql = (
            f'SELECT {select} FROM {first}."{table}" EXCEPT SELECT {select} FROM {second}."{table}"'
        )
        rows = (dict(zip(names, row, strict=True)) for row in connection.execute(sql))
        return {tuple(row[k] for k in keys): row for row in rows}

    after, before = only_in("main", "master"), only_in("master", "main")
    changes: list[Change] = []
    for key in sorted({*after, *before}, key=repr):
        old, new = before.get(key), after.get(key)
        kind = "changed" if old and new else "new" if new else "deleted"
        changes.append(
            Change(
                table=table, kind=kind, key=dict(zip(keys, key, strict=True)), before=old, after=new
            )
        )
    return changes


def store_changes(copy: str | Path, master: str | Path) -> list[Change]:
    """Return every counted row that differs between ``copy`` and ``master``, table by table."""
    connection = sqlite3.connect(f"file:{Path(copy)}?mode=ro", uri=True)
    try:
        connection.execute("ATTACH DATABASE ? AS master", (f"file:{Path(master)}?mode=ro",))
        tables = set(counted_tables(connection, "master")) & set(counted_tables(connection))
        return [change for table in sorted(tables) for change in _table_changes(connection, table)]
    finally:
        connection.close()


def _same_key(change: Change, key: Mapping[str, object]) -> bool:
    return all(
        change.key.get(k, (change.after or change.before or {}).get(k)) == v for k, v in key.items()
    )


def _holds(row: Mapping[str, object] | None, values: Mapping[str, object]) -> bool:
    return row is not None and (not values or subset_score(dict(row), dict(values)) >= 1.0)


def _stray_columns(change: Change, expected: RowExpectation) -> list[str]:
    """Return the columns a changed row changed that the expectation does not name."""
    before, after = change.before or {}, change.after or {}
    return [
        c
        for c in after
        if after[c] != before.get(c) and c not in expected.values and not c.endswith("_at")
    ]


def _claim_keyed(
    expected: RowExpectation, changes: list[Change], free: list[bool]
) -> tuple[dict[str, object] | None, dict[str, object] | None]:
    """Match a changed or deleted row; return (missing, unexpected part) findings."""
    for i, change in enumerate(changes):
        if (
            not free[i]
            or change.table != expected.table
            or not _same_key(change, expected.key or {})
        ):
            continue
        free[i] = False
        held = expected.deleted or _holds(change.after, expected.values)
        if change.kind != expected.kind or not held:
            got = change.model_dump()
            return {"expected": expected.model_dump(exclude_defaults=True), "got": got}, None
        stray = _stray_columns(change, expected) if expected.kind == "changed" else []
        if stray:
            return None, {**change.model_dump(), "columns": stray}
        return None, None
    return {"expected": expected.model_dump(exclude_defaults=True), "got": None}, None


def _claim_new(
    expected: RowExpectation, changes: list[Change], free: list[bool]
) -> dict[str, object] | None:
    """Claim ``count`` new rows holding the values; return a finding when fewer.

    A ``count`` given as operators (``{"$gte": 0}``) claims every such row, then checks
    their number.
    """
    exact = expected.count if isinstance(expected.count, int) else None
    claimed = 0
    for i, change in enumerate(changes):
        if claimed == exact:
            break
        same = free[i] and change.table == expected.table and change.kind == "new"
        if same and _holds(change.after, expected.values):
            free[i] = False
            claimed += 1
    enough = claimed == exact if exact is not None else subset_score(claimed, expected.count)
    if not enough:
        wanted = expected.model_dump(exclude_defaults=True)
        return {"expected": wanted, "got": f"{claimed} such new rows"}
    return None


def judge_state(
    changes: Sequence[Change | Mapping[str, object]], expectations: Expectations
) -> StateVerdict:
    """Return whether ``changes`` are exactly what ``expectations`` ask (see the module)."""
    typed = [c if isinstance(c, Change) else Change.model_validate(c) for c in changes]
    free = [True] * len(typed)
    frozen = set(expectations.frozen_tables or ())
    missing: list[dict[str, object]] = []
    unexpected: list[dict[str, object]] = []
    for expected in sorted(expectations.expected_state, key=lambda e: e.new):
        if expected.new:
            if (finding := _claim_new(expected, typed, free)) is not None:
                missing.append(finding)
            continue
        absent, stray = _claim_keyed(expected, typed, free)
        missing += [absent] if absent else []
        unexpected += [stray] if stray else []
    unexpected += [
        c.model_dump() for c, left in zip(typed, free, strict=True) if left or c.table in frozen
    ]
    return StateVerdict(ok=not missing and not unexpected, unexpected=unexpected, missing=missing)
