"""The change journal's tables and triggers (migration 3), on SQLite and PostgreSQL.

``change_sets`` holds one row per journaled tool call (or undo): thread, call id, tool,
LangGraph step and checkpoint, whether it was a dry run, and which undo reverted it.
``change_journal`` holds one row per row the call changed: the table, the action and the
row's values before and after (JSON; NULL before an insert, after a delete). Triggers on
the tables a tool or an undo writes fill it, in the transaction of the write itself, but
only while ``journal_context`` names the open change set: the store puts it there at the
start of a journaled transaction and removes it before COMMIT
(:mod:`noema_graph.noema.journal`), so writes outside a tool call (the sample data, a
learner's own script) are not journaled.

The SQLite triggers are kept short because SQLite parses every trigger of the schema each
time a connection opens (the domain tools open the store per call): values are a JSON array
in :data:`JOURNALED` column order (the key is read from them), the call's identity is one
id. ``users``, ``decks`` and ``categories`` have none: no tool writes them, and an undo only
writes journaled rows (whose cascades reach only child tables). SQLite's JSON keeps 15
significant digits of a REAL; REAL columns are written with ``printf('%!.17g')``, which
reads back as the same double, so an undo restores an FSRS stability bit for bit.
PostgreSQL's ``to_jsonb`` (an object) is exact already.
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


_POSTGRES_FUNCTION = f"""CREATE FUNCTION noema_journal() RETURNS trigger AS $body$
DECLARE
    open_set bigint;
    old_row jsonb;
    new_row jsonb;
BEGIN
    SELECT set_id INTO open_set FROM {CONTEXT_TABLE} LIMIT 1;
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
    INSERT INTO {JOURNAL_TABLE} (set_id, table_name, action, before, after)
    VALUES (open_set, TG_TABLE_NAME, lower(TG_OP), old_row::text, new_row::text);
    RETURN NULL;
END
$body$ LANGUAGE plpgsql"""


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
