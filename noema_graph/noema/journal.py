"""The change journal: every write of a tool call, reviewable and undoable, and dry runs.

**Why triggers.** Three ways to record what a call changed were weighed:

- SQLite's session extension (through apsw, which can invert a changeset) records every
  row a connection changes, but exists on SQLite only, needs a connection of its own (the
  store runs on sqlite3, aiosqlite and psycopg), and its binary changesets are not
  readable by a query, so ``changes`` and a PostgreSQL store would need a second mechanism.
- Operations recording their own inverse: each of the eight write operations would carry
  hand-written undo code, and a row the operation changes indirectly (a concept created
  on the way, a cascade) is easily missed; a new operation would need new undo code.
- **Triggers** (chosen): one per table and action on SQLite, one generic plpgsql function
  on PostgreSQL (:mod:`noema_graph.noema.journal_schema`). They see every row any
  statement changes, whichever operation ran it, write the journal in the write's own
  transaction (a crash leaves both or neither), and the journal is a plain table that
  both databases query the same way. They journal only while the call's change set is
  open (``change_sets.writing``), so only tool calls are journaled. Their cost: SQLite
  parses every trigger when a connection opens (about 0.4 ms on the project machine),
  which the store's pooled connections pay once; a journaled call adds two statements
  (open the set, close it) and three pages at COMMIT (``bench/bench_journal_overhead.py``).

**Undo** reads a thread's change sets still in effect (a set, a row of ``change_sets``, is
one tool call's rows or one undo's; ``undone_by`` names the undo that reverted it, and a
set is in effect again once that undo is itself undone), newest row first; each row's
current value must equal its ``after`` (else: a conflict, the row changed since), and gets
its ``before`` back. Everything happens in one
transaction; any conflict, or an effect the undo did not intend (a cascade deleting another
run's row), raises :class:`UndoConflict` and rolls it all back. The undo's own writes are
journaled under the undo's id, which ``undo`` accepts like a thread id (undoing an undo).
A thread with an undo in effect refuses further journaled writes (:class:`ThreadUndone`), so
resuming it never silently redoes what was reverted.

**Dry runs** run the operation for real inside its transaction, read the journal rows the
triggers wrote, then roll everything back (:class:`WouldChange`) and store those rows again
marked ``dry_run``: the validation is the operation's own and the preview is exact.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast
from uuid import uuid4

from pydantic import BaseModel, ConfigDict

from noema_graph.errors import NoemaError
from noema_graph.noema.clock import to_db, utc_now
from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.journal_schema import (
    JOURNAL_TABLE,
    JOURNALED,
    SET_SPAN,
    SETS_TABLE,
    in_set,
    set_range,
)
from noema_graph.storage.sql.driver import Op, Statement, execute, fetch_all, fetch_one, insert

T = TypeVar("T")
Action = Literal["insert", "update", "delete"]


@dataclass(frozen=True)
class ChangeContext:
    """Who makes a journaled write: the run's thread, the step and the tool call.

    Attributes:
        thread_id: The run's thread (an undo's own id for an undo's writes).
        call_id: The tool call's id (unique within the thread).
        tool: The tool's name (``undo`` for an undo).
        step: The LangGraph step of the call's checkpoint, when known.
        checkpoint_id: The checkpoint the step started from, when known.
        dry_run: Roll the write back and journal it as a would-be change.
        reverts: For an undo, the thread it reverts.
    """

    thread_id: str
    call_id: str
    tool: str
    step: int | None = None
    checkpoint_id: str | None = None
    dry_run: bool = False
    reverts: str | None = None


class Change(BaseModel):
    """One journaled row change, as ``changes`` shows it."""

    model_config = ConfigDict(frozen=True)

    id: int
    set_id: int
    thread_id: str
    call_id: str
    tool: str
    step: int | None
    table: str
    key: dict[str, object]
    action: Action
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    dry_run: bool
    undone_by: str | None
    reverts: str | None
    created_at: str
    text: str = ""


class UndoReport(BaseModel):
    """What an undo reverted."""

    model_config = ConfigDict(frozen=True)

    undo_id: str
    thread_id: str
    rows: int
    tables: list[str]
    calls: list[str]


class JournalError(NoemaError):
    """The journal cannot serve the request; the message names the problem and the fix."""


class UndoConflict(JournalError):
    """Rows changed since the run wrote them; nothing was undone.

    Attributes:
        rows: One line per conflicting row.
    """

    def __init__(self, thread_id: str, rows: Sequence[str]) -> None:
        """Name the thread and the rows that changed since."""
        self.rows = list(rows)
        shown = "; ".join(self.rows[:5]) + (f"; and {len(rows) - 5} more" if len(rows) > 5 else "")
        super().__init__(
            f"cannot undo {thread_id}: {len(rows)} row(s) changed since it wrote them: {shown}"
            " (nothing was undone; undo the later changes first, or change the rows back)"
        )


class ThreadUndone(ToolInputError):
    """A journaled write on a thread whose changes an undo reverted (a resumed step)."""


class WouldChange(NoemaError):
    """Raised inside a dry run's transaction so that it rolls back; carries the preview.

    A control-flow signal: the journaled call catches it; it never reaches the caller.
    """

    def __init__(self, result: Any, rows: list[dict[str, object]]) -> None:
        """Keep the operation's result and the journal rows its writes produced."""
        super().__init__("dry run")
        self.result = result
        self.rows = rows


_SET_COLUMNS = "thread_id, call_id, tool, step, checkpoint_id, dry_run, reverts, created_at"
_INSERT_SET = (
    f"INSERT INTO {SETS_TABLE} ({_SET_COLUMNS}, writing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
OPEN_SET = (
    f"INSERT INTO {SETS_TABLE} ({_SET_COLUMNS}, writing) SELECT ?, ?, ?, ?, ?, ?, ?, ?, 1"
    f" WHERE NOT EXISTS (SELECT 1 FROM {SETS_TABLE} WHERE thread_id = ?"
    " AND undone_by IS NOT NULL AND dry_run = 0)"
)
"""Open a tool call's change set unless an undo reverted the thread (8 set values, thread)."""
_SELECT = (
    f"SELECT j.id, j.id / {SET_SPAN} AS set_id, j.table_name, j.action, j.before, j.after,"
    " s.thread_id, s.call_id, s.tool, s.step, s.checkpoint_id, s.dry_run, s.reverts,"
    f" s.undone_by, s.created_at FROM {SETS_TABLE} s JOIN {JOURNAL_TABLE} j"
    f" ON j.id {in_set('s.id')}"
)
CLOSE_SET = f"UPDATE {SETS_TABLE} SET writing = NULL WHERE id = ?"
"""Stop journaling under a change set (its id), before COMMIT."""


def _set_values(change: ChangeContext) -> tuple[object, ...]:
    return (
        change.thread_id,
        change.call_id,
        change.tool,
        change.step,
        change.checkpoint_id,
        int(change.dry_run),
        change.reverts,
        to_db(utc_now()),
    )


def _insert_set(change: ChangeContext, *, writing: bool) -> Op[int]:
    """Insert the change set row of ``change``; the triggers journal under it if ``writing``.

    A set is opened only where no other is: every transaction that opens one closes it
    before COMMIT (:func:`_close_set`), and one that fails rolls back.
    """
    set_id = yield from insert(_INSERT_SET, (*_set_values(change), 1 if writing else None))
    return set_id


def _set_rows(set_id: int) -> Op[list[dict[str, object]]]:
    """Return the journal rows of change set ``set_id`` as read, oldest first."""
    rows = yield from fetch_all(_SELECT + " WHERE s.id = ? ORDER BY j.id", (set_id,))
    return [dict(row) for row in rows]


def _close_set(set_id: int) -> Op[None]:
    """Stop journaling (one UPDATE of a page COMMIT writes anyway).

    A set whose call changed nothing is kept, with no rows or with the rows of UPDATEs
    that changed nothing (SQLite's triggers journal those too; a WHEN clause would cost
    parsing): every reader leaves such rows out (:func:`row_changes`), so the set shows
    nothing, and checking for it would cost every call a statement.
    """
    yield from execute(CLOSE_SET, (set_id,))


def journaled(op: Op[T], change: ChangeContext) -> Op[T]:
    """Run ``op`` with its writes journaled under ``change``, in the same transaction.

    Raises:
        ThreadUndone: An undo of ``change.thread_id`` is in effect (nothing runs).
        WouldChange: ``change.dry_run``: after ``op`` ran; the caller's transaction rolls
            back and :func:`record_dry_run` stores the rows.
    """
    opened = yield Statement(OPEN_SET, (*_set_values(change), change.thread_id), returns_id=True)
    if opened.rowcount == 1 and opened.lastrowid is not None:
        set_id = opened.lastrowid
    else:  # a change of the thread was reverted: is that undo in effect?
        undo_id = yield from undo_in_effect(change.thread_id)
        if undo_id is not None:
            raise ThreadUndone(
                "thread_id",
                f"thread {change.thread_id}'s changes were undone ({undo_id}); running "
                f"{change.tool} now could redo what the learner took back",
                fix=f"ask the learner: start a new thread, or take the undo back with "
                f"`noema-graph undo {undo_id}`",
            )
        set_id = yield from _insert_set(change, writing=True)
    result = yield from op
    if change.dry_run:
        rows = yield from _set_rows(set_id)
        raise WouldChange(result, rows)
    yield from _close_set(set_id)
    return result


def record_dry_run(rows: Sequence[Mapping[str, Any]]) -> Op[None]:
    """Store a dry run's would-be changes (a set marked ``dry_run``: never undone).

    A dry call made again under the same thread and call id (a node that paused for a
    question runs again from its start on resume) is stored once.
    """
    rows = [r for r in rows if r["action"] != "update" or r["before"] != r["after"]]
    if not rows:
        return
    first = rows[0]
    stored = yield from fetch_one(
        f"SELECT id FROM {SETS_TABLE} WHERE thread_id = ? AND call_id = ? AND tool = ?"
        " AND dry_run = 1",
        (str(first["thread_id"]), str(first["call_id"]), str(first["tool"])),
    )
    if stored is not None:
        return
    set_id = yield from _insert_set(
        ChangeContext(
            thread_id=str(first["thread_id"]),
            call_id=str(first["call_id"]),
            tool=str(first["tool"]),
            step=first["step"],
            checkpoint_id=first["checkpoint_id"],
            dry_run=True,
        ),
        writing=False,
    )
    start, _ = set_range(set_id)
    for number, row in enumerate(rows):
        yield from execute(
            f"INSERT INTO {JOURNAL_TABLE} (id, table_name, action, before, after)"
            " VALUES (?, ?, ?, ?, ?)",
            (start + number, row["table_name"], row["action"], row["before"], row["after"]),
        )


def _values(table: str, text: str | None) -> dict[str, object] | None:
    """Decode a journaled row: an object (PostgreSQL) or an array in column order (SQLite)."""
    if text is None:
        return None
    data = json.loads(text)
    if isinstance(data, dict):
        return cast(dict[str, object], data)
    values = cast(list[object], data)
    spec = JOURNALED.get(table)
    if spec is None or len(spec.columns) != len(values):
        return {f"column {i + 1}": value for i, value in enumerate(values)}
    return dict(zip(spec.columns, values, strict=True))


def _change(row: Mapping[str, Any]) -> Change:
    table = str(row["table_name"])
    before, after = _values(table, row["before"]), _values(table, row["after"])
    spec = JOURNALED.get(table)
    present = after if after is not None else before or {}
    key = {k: present.get(k) for k in spec.key} if spec is not None else {}
    return Change(
        id=int(row["id"]),
        set_id=int(row["set_id"]),
        thread_id=str(row["thread_id"]),
        call_id=str(row["call_id"]),
        tool=str(row["tool"]),
        step=None if row["step"] is None else int(row["step"]),
        table=table,
        key=key,
        action=row["action"],
        before=before,
        after=after,
        dry_run=bool(row["dry_run"]),
        undone_by=row["undone_by"],
        reverts=row["reverts"],
        created_at=str(row["created_at"]),
    )


def _real(change: Change) -> bool:
    """Return False for an UPDATE that changed nothing (SQLite's triggers journal those)."""
    return change.action != "update" or change.before != change.after


def row_changes(rows: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Return journal rows (as read) as :class:`Change` models, no-op updates left out."""
    return [c for c in (_change(row) for row in rows) if _real(c)]


def thread_changes(thread_id: str) -> Op[list[Change]]:
    """Return every journaled change of ``thread_id`` (an undo's id too), oldest first."""
    rows = yield from fetch_all(_SELECT + " WHERE s.thread_id = ? ORDER BY j.id", (thread_id,))
    return row_changes([dict(row) for row in rows])


def undos_of(thread_id: str) -> Op[list[str]]:
    """Return the ids of the undos that reverted changes of ``thread_id``, oldest first."""
    rows = yield from fetch_all(
        f"SELECT thread_id FROM {SETS_TABLE} WHERE reverts = ? ORDER BY id", (thread_id,)
    )
    return [str(row["thread_id"]) for row in rows]


def undo_states() -> Op[dict[str, str | None]]:
    """Return, for every undo set, the undo that reverted it (None: not reverted)."""
    rows = yield from fetch_all(
        f"SELECT thread_id, undone_by FROM {SETS_TABLE} WHERE tool = 'undo'"
    )
    return {str(r["thread_id"]): r["undone_by"] for r in rows}


def reverted_set_in_effect(undone_by: str | None, undos: Mapping[str, str | None]) -> bool:
    """Return whether a set reverted by ``undone_by`` still has its effect (chains of undos)."""
    depth = 0
    while undone_by is not None:
        if undone_by not in undos or depth > len(undos):  # a dangling id: count as in effect
            return depth % 2 == 1
        undone_by, depth = undos[undone_by], depth + 1
    return depth % 2 == 0


def undo_in_effect(thread_id: str) -> Op[str | None]:
    """Return the id of an undo in effect over ``thread_id``'s changes, else None."""
    rows = yield from fetch_all(
        f"SELECT DISTINCT undone_by FROM {SETS_TABLE}"
        " WHERE thread_id = ? AND undone_by IS NOT NULL AND dry_run = 0",
        (thread_id,),
    )
    if not rows:
        return None
    undos = yield from undo_states()
    for row in rows:
        if not reverted_set_in_effect(row["undone_by"], undos):
            return str(row["undone_by"])
    return None


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


_SQLITE_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
_POSTGRES_TABLES = (
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()"
)


def _check_tables(changes: Sequence[Change]) -> Op[None]:
    rows = yield from fetch_all(_SQLITE_TABLES, postgres=_POSTGRES_TABLES)
    present = {str(r["name"]) for r in rows}
    for change in changes:
        if change.table not in present or change.table not in JOURNALED:
            raise JournalError(
                f"journal row {change.id} of {change.thread_id} names table {change.table!r},"
                " which this learning store no longer has; nothing was undone"
            )
        for values in (change.before, change.after, change.key):
            unknown = sorted(set(values or {}) - set(JOURNALED[change.table].columns))
            if unknown:
                raise JournalError(
                    f"journal row {change.id} names columns {unknown} that table"
                    f" {change.table!r} does not have; nothing was undone"
                )


def _where(key: Mapping[str, object]) -> tuple[str, list[object]]:
    return " AND ".join(f"{_identifier(c)} = ?" for c in key), list(key.values())


def current_row(table: str, key: Mapping[str, object]) -> Op[dict[str, object] | None]:
    """Return the row of ``table`` with primary key ``key`` as a dict, or None."""
    where, args = _where(key)
    row = yield from fetch_one(f"SELECT * FROM {_identifier(table)} WHERE {where}", args)
    return None if row is None else dict(row)


def _same(current: Mapping[str, object] | None, expected: Mapping[str, object] | None) -> bool:
    if current is None or expected is None:
        return current is None and expected is None
    return all(current.get(column) == value for column, value in expected.items())


def _targets(thread_id: str, step: int | None) -> Op[list[Change]]:
    changes = yield from thread_changes(thread_id)
    undos = yield from undo_states()
    live = [
        c
        for c in changes
        if not c.dry_run and (c.undone_by is None or reverted_set_in_effect(c.undone_by, undos))
    ]
    if step is not None:
        live = [c for c in live if c.step is not None and c.step >= step]
    return live


def undo_thread(
    thread_id: str, *, step: int | None = None, undo_id: str | None = None
) -> Op[UndoReport]:
    """Revert ``thread_id``'s changes in effect (those from LangGraph step ``step`` on).

    Newest row first, in the caller's transaction; the undo's writes are journaled under
    ``undo_id`` (default: a new ``undo-...`` id), so the undo can be undone in turn.

    Raises:
        JournalError: No change of the thread is in effect (or from ``step`` on), or a
            journal row names a table or column the store no longer has.
        UndoConflict: A row changed since; nothing is written.
    """
    targets = yield from _targets(thread_id, step)
    if not targets:
        where = f" from step {step} on" if step is not None else ""
        raise JournalError(f"thread {thread_id} has no change in effect{where} to undo")
    yield from _check_tables(targets)
    undo = undo_id or f"undo-{uuid4().hex[:10]}"
    set_id = yield from _insert_set(
        ChangeContext(thread_id=undo, call_id=undo, tool="undo", reverts=thread_id), writing=True
    )
    conflicts: list[str] = []
    for change in reversed(targets):
        current = yield from current_row(change.table, change.key)
        if not _same(current, change.after):
            conflicts.append(_conflict_line(change, current))
            continue
        yield from _apply(change)
    rows = yield from _set_rows(set_id)
    made = row_changes(rows)
    if len(made) > len(targets) - len(conflicts):
        expected = {(c.table, json.dumps(c.key, sort_keys=True)) for c in targets}
        for extra in made:
            if (extra.table, json.dumps(extra.key, sort_keys=True)) not in expected:
                conflicts.append(f"{label(extra.table, extra.key)} would be {extra.action}d too")
    if conflicts:
        raise UndoConflict(thread_id, conflicts)
    sets = sorted({c.set_id for c in targets})
    for start in range(0, len(sets), 500):
        chunk = sets[start : start + 500]
        yield from execute(
            f"UPDATE {SETS_TABLE} SET undone_by = ? WHERE id IN ({','.join('?' * len(chunk))})",
            [undo, *chunk],
        )
    yield from _close_set(set_id)
    return UndoReport(
        undo_id=undo,
        thread_id=thread_id,
        rows=len(targets),
        tables=sorted({c.table for c in targets}),
        calls=list(dict.fromkeys(c.call_id for c in reversed(targets))),
    )


def _apply(change: Change) -> Op[None]:
    table = _identifier(change.table)
    where, args = _where(change.key)
    before = change.before or {}
    if change.action == "insert":
        yield from execute(f"DELETE FROM {table} WHERE {where}", args)
    elif change.action == "update":
        sets = [c for c in before if c not in change.key]
        assignments = ", ".join(f"{_identifier(c)} = ?" for c in sets)
        yield from execute(
            f"UPDATE {table} SET {assignments} WHERE {where}", [before[c] for c in sets] + args
        )
    else:
        columns = ", ".join(_identifier(c) for c in before)
        marks = ", ".join("?" * len(before))
        yield from execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(before.values())
        )


_SINGULAR = {
    "users": "user",
    "categories": "category",
    "decks": "deck",
    "cards": "card",
    "concepts": "concept",
    "card_concepts": "card concept",
    "concept_links": "concept link",
    "reviews": "review",
    "card_states": "card state",
    "sources": "source",
    "chunks": "chunk",
    "card_flags": "card flag",
}


def label(table: str, key: Mapping[str, object]) -> str:
    """Return how a row is named in messages: ``card 5``, ``card 5 state of learner 1``."""
    if table == "card_states":
        return f"card {key.get('card_id')} state of learner {key.get('user_id')}"
    if table == "card_concepts":
        return f"card {key.get('card_id')} concept {key.get('concept_id')}"
    name = _SINGULAR.get(table, table)
    if list(key) == ["id"]:
        return f"{name} {key['id']}"
    return f"{name} " + ", ".join(f"{k} {v}" for k, v in key.items())


def _conflict_line(change: Change, current: Mapping[str, object] | None) -> str:
    name = label(change.table, change.key)
    if current is None:
        return f"{name} was deleted since"
    if change.after is None:
        return f"{name} was created again since"
    differs = sorted(c for c, v in change.after.items() if current.get(c) != v)
    return f"{name} changed since ({', '.join(differs)})"
