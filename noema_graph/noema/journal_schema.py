"""The change journal's tables and triggers (migrations 3 and 4), on SQLite and PostgreSQL.

``change_sets`` holds one row per journaled tool call (or undo): thread, call id, tool,
LangGraph step and checkpoint, whether it was a dry run, which undo reverted it, and
``writing`` (1 while the call writes, NULL once it committed). ``change_journal`` holds one row
per row the call changed: the table, the action and the row's values before and after (JSON;
NULL before an insert, after a delete). A journal row's id is its set's id times
:data:`SET_SPAN` plus its number in the set, so a set's rows are one range of the table's
own key: no second index, and COMMIT writes the set's page, its thread index entry and the
journal's last page (migration 3 wrote six pages: a ``journal_context`` row, a journal index
on ``set_id``, a ``reverts`` index entry for every set). Triggers on the tables a tool or an
undo writes fill the journal in the transaction of the write itself, but only while the
newest change set is open: the store opens it at the start of a journaled transaction and
closes it before COMMIT (:mod:`noema_graph.noema.journal`), so writes outside a tool call
(the sample data, a learner's own script) are not journaled.

The SQLite triggers are kept short because SQLite parses every trigger of the schema each
time a connection opens: values are a JSON array in :data:`JOURNALED` column order (the key
is read from them). ``users``, ``decks`` and ``categories`` have none: no tool writes them,
and an undo only writes journaled rows (whose cascades reach only child tables). SQLite's
JSON keeps 15 significant digits of a REAL; REAL columns are written with
``printf('%!.17g')``, which reads back as the same double, so an undo restores an FSRS
stability bit for bit. PostgreSQL's ``to_jsonb`` (an object) is exact already; there the
open set is the newest one with ``writing = 1`` that the transaction sees (a partial index),
since concurrent writers do not see each other's open sets.
"""

from __future__ import annotations

from typing import NamedTuple

from noema_graph.storage.sql.dialect import postgres_ddl


class JournaledTable(NamedTuple):
    """A learner-data table the triggers watch: its key columns, every column, REAL ones."""

    key: tuple[str, ...]
    columns: tuple[str, ...]
    reals: tuple[str, ...] = ()


JOURNALED: dict[str, JournaledTable] = {
    "users": JournaledTable(("id",), ("id", "name", "created_at")),
    "categories": JournaledTable(("id",), ("id", "name", "parent_id")),
    "decks": JournaledTable(("id",), ("id", "name", "description", "created_at")),
    "cards": JournaledTable(
        ("id",),
        (
            "id",
            "deck_id",
            "category_id",
            "kind",
            "front",
            "back",
            "tags",
            "created_at",
            "updated_at",
        ),
    ),
    "concepts": JournaledTable(("id",), ("id", "name", "description")),
    "card_concepts": JournaledTable(("card_id", "concept_id"), ("card_id", "concept_id")),
    "concept_links": JournaledTable(
        ("id",), ("id", "source_id", "target_id", "kind", "created_at")
    ),
    "reviews": JournaledTable(
        ("id",),
        ("id", "card_id", "user_id", "rating", "response_time_ms", "confidence", "reviewed_at"),
        ("confidence",),
    ),
    "card_states": JournaledTable(
        ("user_id", "card_id"),
        (
            "user_id",
            "card_id",
            "state",
            "step",
            "stability",
            "difficulty",
            "due",
            "last_review",
            "reps",
            "lapses",
        ),
        ("stability", "difficulty"),
    ),
    "sources": JournaledTable(
        ("id",),
        ("id", "title", "content_sha256", "char_count", "chunk_size", "overlap", "created_at"),
    ),
    "chunks": JournaledTable(
        ("id",), ("id", "source_id", "position", "start_char", "end_char", "text")
    ),
    "card_flags": JournaledTable(("id",), ("id", "card_id", "reason", "severity", "created_at")),
}
"""Every table of the learner's data, as migrations 1 and 2 create it (a test checks)."""

JOURNAL_TABLE = "change_journal"
SETS_TABLE = "change_sets"
CONTEXT_TABLE = "journal_context"
"""Migration 3's one-row table naming the open set; migration 4 drops it."""
SET_SPAN = 4_294_967_296
"""Journal ids per change set (2**32): set ``s`` owns ``s * SET_SPAN`` up to the next set's."""
UNWATCHED = frozenset({"users", "decks", "categories"})
"""Learner tables without triggers: no tool writes them (see the module docstring)."""

_TABLES = (
    f"""CREATE TABLE {SETS_TABLE} (
        id INTEGER PRIMARY KEY,
        thread_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        step INTEGER,
        checkpoint_id TEXT,
        dry_run INTEGER NOT NULL DEFAULT 0,
        reverts TEXT,
        undone_by TEXT,
        created_at TEXT NOT NULL
    )""",
    f"CREATE INDEX change_sets_thread ON {SETS_TABLE}(thread_id, undone_by)",
    f"CREATE INDEX change_sets_reverts ON {SETS_TABLE}(reverts)",
    f"""CREATE TABLE {JOURNAL_TABLE} (
        id INTEGER PRIMARY KEY,
        set_id INTEGER NOT NULL REFERENCES {SETS_TABLE}(id) ON DELETE CASCADE,
        table_name TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('insert', 'update', 'delete')),
        before TEXT,
        after TEXT
    )""",
    f"CREATE INDEX change_journal_set ON {JOURNAL_TABLE}(set_id)",
    f"CREATE TABLE {CONTEXT_TABLE} (set_id INTEGER NOT NULL)",
)


def _sqlite_value(row: str, column: str, spec: JournaledTable) -> str:
    value = f"{row}.{column}"
    if column in spec.reals:  # 17 digits read back as the same double (JSON keeps 15)
        return f"iif(typeof({value})='real',json(printf('%!.17g',{value})),{value})"
    return value


def _sqlite_row(row: str, spec: JournaledTable) -> str:
    return f"json_array({','.join(_sqlite_value(row, c, spec) for c in spec.columns)})"


def _sqlite_triggers(table: str, spec: JournaledTable) -> tuple[str, ...]:
    insert = (
        f"INSERT INTO {JOURNAL_TABLE}(set_id,table_name,action,before,after)"
        f" SELECT set_id,'{table}','{{action}}',{{before}},{{after}} FROM {CONTEXT_TABLE}"
    )
    active = f"EXISTS(SELECT 1 FROM {CONTEXT_TABLE})"
    new, old = _sqlite_row("NEW", spec), _sqlite_row("OLD", spec)
    return (
        f"CREATE TRIGGER {table}_journal_insert AFTER INSERT ON {table} WHEN {active} BEGIN "
        + insert.format(action="insert", before="NULL", after=new)
        + "; END",
        f"CREATE TRIGGER {table}_journal_update AFTER UPDATE ON {table} WHEN {active} BEGIN "
        + insert.format(action="update", before=old, after=new)
        + "; END",
        f"CREATE TRIGGER {table}_journal_delete AFTER DELETE ON {table} WHEN {active} BEGIN "
        + insert.format(action="delete", before=old, after="NULL")
        + "; END",
    )


def _postgres_function(create: str, variables: str, find_set: str, insert: str) -> str:
    """Return the plpgsql trigger function: find the open set, skip no-op updates, insert."""
    return f"""{create} noema_journal() RETURNS trigger AS $body$
DECLARE
    open_set bigint;
{variables}    old_row jsonb;
    new_row jsonb;
BEGIN
    {find_set}
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        old_row := to_jsonb(OLD);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        new_row := to_jsonb(NEW);
    END IF;
    IF TG_OP = 'UPDATE' AND old_row = new_row THEN
        RETURN NULL;
    END IF;
{insert}
    RETURN NULL;
END
$body$ LANGUAGE plpgsql"""


_POSTGRES_FUNCTION = _postgres_function(
    "CREATE FUNCTION",
    "",
    f"SELECT set_id INTO open_set FROM {CONTEXT_TABLE} LIMIT 1;",
    f"""    INSERT INTO {JOURNAL_TABLE} (set_id, table_name, action, before, after)
    VALUES (open_set, TG_TABLE_NAME, lower(TG_OP), old_row::text, new_row::text);""",
)


def _postgres_trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_journal AFTER INSERT OR UPDATE OR DELETE ON {table}"
        " FOR EACH ROW EXECUTE FUNCTION noema_journal()"
    )


WATCHED = {table: spec for table, spec in JOURNALED.items() if table not in UNWATCHED}

JOURNAL_SQLITE: tuple[str, ...] = (
    *_TABLES,
    *(stmt for table, spec in WATCHED.items() for stmt in _sqlite_triggers(table, spec)),
)
"""Migration 3 on SQLite: the journal, its change sets and context, three triggers a table."""

JOURNAL_POSTGRES: tuple[str, ...] = (
    *(postgres_ddl(stmt) for stmt in _TABLES),
    _POSTGRES_FUNCTION,
    *(_postgres_trigger(table) for table in WATCHED),
)
"""Migration 3 on PostgreSQL: the same tables, one trigger function for every table."""


def set_range(set_id: int) -> tuple[int, int]:
    """Return the first and last journal id change set ``set_id`` owns (migration 4)."""
    return set_id * SET_SPAN, (set_id + 1) * SET_SPAN - 1


def in_set(set_id: str) -> str:
    """Return SQL testing that a journal id lies in the set whose id is the SQL ``set_id``."""
    return f"BETWEEN {set_id} * {SET_SPAN} AND {set_id} * {SET_SPAN} + {SET_SPAN - 1}"


_JOURNAL_4 = f"""CREATE TABLE {JOURNAL_TABLE}_4 (
        id INTEGER PRIMARY KEY,
        table_name TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('insert', 'update', 'delete')),
        before TEXT,
        after TEXT
    )"""
_RENUMBER = (
    f"INSERT INTO {JOURNAL_TABLE}_4 (id, table_name, action, before, after)"
    f" SELECT set_id * {SET_SPAN} + row_number() OVER (PARTITION BY set_id ORDER BY id) - 1,"
    f" table_name, action, before, after FROM {JOURNAL_TABLE}"
)
_RESHAPE = (  # both databases: the journal keyed by set, the open flag, a partial index
    _JOURNAL_4,
    _RENUMBER,
    f"DROP TABLE {JOURNAL_TABLE}",
    f"ALTER TABLE {JOURNAL_TABLE}_4 RENAME TO {JOURNAL_TABLE}",
    f"DROP TABLE {CONTEXT_TABLE}",
    f"ALTER TABLE {SETS_TABLE} ADD COLUMN writing INTEGER",
    "DROP INDEX change_sets_reverts",
    f"CREATE INDEX change_sets_reverts ON {SETS_TABLE}(reverts) WHERE reverts IS NOT NULL",
)
_NEXT_ID = f"max(s.id*{SET_SPAN},ifnull((SELECT max(id) FROM {JOURNAL_TABLE}),0)+1)"
"""The next journal id of the open set ``s``: the newest set's rows are the table's last."""


def _sqlite_triggers_4(table: str, spec: JournaledTable) -> tuple[str, ...]:
    new, old = _sqlite_row("NEW", spec), _sqlite_row("OLD", spec)
    rows = {"insert": ("NULL", new), "update": (old, new), "delete": (old, "NULL")}
    return tuple(
        f"CREATE TRIGGER {table}_journal_{action} AFTER {action.upper()} ON {table} BEGIN "
        f"INSERT INTO {JOURNAL_TABLE}(id,table_name,action,before,after) SELECT {_NEXT_ID},"
        f"'{table}','{action}',{before},{after} FROM {SETS_TABLE} s"
        f" WHERE s.id=(SELECT max(id) FROM {SETS_TABLE}) AND s.writing=1; END"
        for action, (before, after) in rows.items()
    )


_POSTGRES_FUNCTION_4 = _postgres_function(
    "CREATE OR REPLACE FUNCTION",
    "    next_id bigint;\n",
    f"SELECT id INTO open_set FROM {SETS_TABLE} WHERE writing = 1 ORDER BY id DESC LIMIT 1;",
    f"""    SELECT COALESCE(MAX(id) + 1, open_set * {SET_SPAN}) INTO next_id FROM {JOURNAL_TABLE}
    WHERE id >= open_set * {SET_SPAN} AND id < (open_set + 1) * {SET_SPAN};
    INSERT INTO {JOURNAL_TABLE} (id, table_name, action, before, after)
    VALUES (next_id, TG_TABLE_NAME, lower(TG_OP), old_row::text, new_row::text);""",
)

JOURNAL4_SQLITE: tuple[str, ...] = (
    *(
        f"DROP TRIGGER {table}_journal_{action}"
        for table in WATCHED
        for action in ("insert", "update", "delete")
    ),
    *_RESHAPE,
    *(stmt for table, spec in WATCHED.items() for stmt in _sqlite_triggers_4(table, spec)),
)
"""Migration 4 on SQLite: the journal keyed by set, no context table, new triggers."""

JOURNAL4_POSTGRES: tuple[str, ...] = (
    *(postgres_ddl(stmt) for stmt in _RESHAPE),
    f"CREATE INDEX change_sets_writing ON {SETS_TABLE}(id) WHERE writing = 1",
    _POSTGRES_FUNCTION_4,
)
"""Migration 4 on PostgreSQL: the same tables; the triggers stay, their function changes."""
