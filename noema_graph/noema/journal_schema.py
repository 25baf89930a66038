"""The change journal's tables and triggers (migration 3), on SQLite and PostgreSQL.

``change_journal`` holds one row per row a tool call changed: the table, the row's key and
its values before and after (JSON text; NULL before an insert, after a delete). Triggers on
every learner-data table write it, in the transaction of the write itself, but only while
``journal_context`` holds a row: the store puts the call's identity there at the start of a
journaled transaction and removes it before COMMIT (:mod:`noema_graph.noema.journal`), so
writes outside a tool call (the sample data, a learner's own script) are not journaled.

SQLite's ``json_object`` keeps 15 significant digits of a REAL; the triggers write REAL
columns with ``printf('%!.17g')`` instead, which reads back as the same double, so an undo
restores an FSRS stability bit for bit. PostgreSQL's ``to_jsonb`` is exact already.
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
CONTEXT_TABLE = "journal_context"

_TABLES = (
    f"""CREATE TABLE {JOURNAL_TABLE} (
        id INTEGER PRIMARY KEY,
        thread_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        step INTEGER,
        checkpoint_id TEXT,
        dry_run INTEGER NOT NULL DEFAULT 0,
        table_name TEXT NOT NULL,
        row_key TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('insert', 'update', 'delete')),
        before TEXT,
        after TEXT,
        undone_by TEXT,
        reverts TEXT,
        created_at TEXT NOT NULL
    )""",
    f"CREATE INDEX change_journal_thread ON {JOURNAL_TABLE}(thread_id, id)",
    f"CREATE INDEX change_journal_call ON {JOURNAL_TABLE}(call_id)",
    f"""CREATE TABLE {CONTEXT_TABLE} (
        call_id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        step INTEGER,
        checkpoint_id TEXT,
        dry_run INTEGER NOT NULL DEFAULT 0,
        reverts TEXT,
        created_at TEXT NOT NULL
    )""",
)


def _sqlite_value(row: str, column: str, spec: JournaledTable) -> str:
    value = f"{row}.{column}"
    if column in spec.reals:  # 17 digits read back as the same double (json_object keeps 15)
        return (
            f"CASE WHEN typeof({value}) = 'real' THEN json(printf('%!.17g', {value}))"
            f" ELSE {value} END"
        )
    return value


def _sqlite_json(row: str, columns: tuple[str, ...], spec: JournaledTable) -> str:
    pairs = ", ".join(f"'{c}', {_sqlite_value(row, c, spec)}" for c in columns)
    return f"json_object({pairs})"


def _sqlite_triggers(table: str, spec: JournaledTable) -> tuple[str, ...]:
    insert = (
        f"INSERT INTO {JOURNAL_TABLE} (thread_id, call_id, tool, step, checkpoint_id, dry_run,"
        " table_name, row_key, action, before, after, reverts, created_at)"
        " SELECT c.thread_id, c.call_id, c.tool, c.step, c.checkpoint_id, c.dry_run,"
        f" '{table}', {{key}}, '{{action}}', {{before}}, {{after}}, c.reverts, c.created_at"
        f" FROM {CONTEXT_TABLE} c"
    )
    active = f"EXISTS (SELECT 1 FROM {CONTEXT_TABLE})"
    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in spec.columns)
    new_key, old_key = (_sqlite_json(r, spec.key, spec) for r in ("NEW", "OLD"))
    new_row, old_row = (_sqlite_json(r, spec.columns, spec) for r in ("NEW", "OLD"))
    return (
        f"CREATE TRIGGER {table}_journal_insert AFTER INSERT ON {table} WHEN {active} BEGIN "
        + insert.format(key=new_key, action="insert", before="NULL", after=new_row)
        + "; END",
        f"CREATE TRIGGER {table}_journal_update AFTER UPDATE ON {table}"
        f" WHEN {active} AND ({changed}) BEGIN "
        + insert.format(key=new_key, action="update", before=old_row, after=new_row)
        + "; END",
        f"CREATE TRIGGER {table}_journal_delete AFTER DELETE ON {table} WHEN {active} BEGIN "
        + insert.format(key=old_key, action="delete", before=old_row, after="NULL")
        + "; END",
    )


_POSTGRES_FUNCTION = f"""CREATE FUNCTION noema_journal() RETURNS trigger AS $body$
DECLARE
    ctx record;
    old_row jsonb;
    new_row jsonb;
    row_key jsonb;
BEGIN
    SELECT * INTO ctx FROM {CONTEXT_TABLE} LIMIT 1;
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
    SELECT jsonb_object_agg(k, COALESCE(new_row, old_row) -> k) INTO row_key
        FROM unnest(TG_ARGV) AS k;
    INSERT INTO {JOURNAL_TABLE} (thread_id, call_id, tool, step, checkpoint_id, dry_run,
        table_name, row_key, action, before, after, reverts, created_at)
    VALUES (ctx.thread_id, ctx.call_id, ctx.tool, ctx.step, ctx.checkpoint_id, ctx.dry_run,
        TG_TABLE_NAME, row_key::text, lower(TG_OP), old_row::text, new_row::text,
        ctx.reverts, ctx.created_at);
    RETURN NULL;
END
$body$ LANGUAGE plpgsql"""


def _postgres_trigger(table: str, spec: JournaledTable) -> str:
    keys = ", ".join(f"'{k}'" for k in spec.key)
    return (
        f"CREATE TRIGGER {table}_journal AFTER INSERT OR UPDATE OR DELETE ON {table}"
        f" FOR EACH ROW EXECUTE FUNCTION noema_journal({keys})"
    )


JOURNAL_SQLITE: tuple[str, ...] = (
    *_TABLES,
    *(stmt for table, spec in JOURNALED.items() for stmt in _sqlite_triggers(table, spec)),
)
"""Migration 3 on SQLite: the journal, its context and three triggers per table."""


JOURNAL_POSTGRES: tuple[str, ...] = (
    *(postgres_ddl(stmt) for stmt in _TABLES),
    _POSTGRES_FUNCTION,
    *(_postgres_trigger(table, spec) for table, spec in JOURNALED.items()),
)
"""Migration 3 on PostgreSQL: the journal, its context, one trigger function for all tables."""
