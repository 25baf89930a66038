"""The learning store's schema, as an ordered list of migrations.

Never edit a released migration: append a new one. Times are ISO 8601 UTC text
(``2025-01-31T08:00:00+00:00``), which sorts chronologically; lists (tags) are JSON text.
The statements are SQLite's; PostgreSQL runs them through
:func:`~noema_graph.storage.sql.dialect.postgres_ddl` unless a migration spells its own
(``postgres``), as full-text search does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from noema_graph.noema.journal_schema import (
    JOURNAL4_POSTGRES,
    JOURNAL4_SQLITE,
    JOURNAL_POSTGRES,
    JOURNAL_SQLITE,
    JOURNAL_TABLE,
    SETS_TABLE,
)
from noema_graph.storage.sql.dialect import DialectName, postgres_ddl

DEFAULT_LEARNING_DB = Path("noema-learning.sqlite")
"""Where the learning store lives when no ``db`` is given (relative to the working dir)."""


@dataclass(frozen=True)
class Migration:
    """One schema step.

    Attributes:
        version: The schema version after this step (1, 2, ...; no gaps).
        name: A short description, stored in ``schema_version``.
        statements: SQL statements applied in order, in one transaction (SQLite's).
        postgres: PostgreSQL's statements where they are not the translated ``statements``.
    """

    version: int
    name: str
    statements: tuple[str, ...]
    postgres: tuple[str, ...] | None = None

    def statements_for(self, dialect: DialectName) -> tuple[str, ...]:
        """Return the statements that apply this migration in ``dialect``."""
        if dialect == "sqlite":
            return self.statements
        if self.postgres is not None:
            return self.postgres
        return tuple(postgres_ddl(statement) for statement in self.statements)


_CORE = (
    """CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE categories (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL CHECK (length(trim(name)) > 0),
        parent_id INTEGER REFERENCES categories(id) ON DELETE RESTRICT,
        UNIQUE (parent_id, name)
    )""",
    """CREATE TABLE decks (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE CHECK (length(trim(name)) > 0),
        description TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE cards (
        id INTEGER PRIMARY KEY,
        deck_id INTEGER NOT NULL REFERENCES decks(id) ON DELETE CASCADE,
        category_id INTEGER REFERENCES categories(id) ON DELETE SET NULL,
        kind TEXT NOT NULL CHECK (kind IN ('atomic', 'cloze', 'image_occlusion')),
        front TEXT NOT NULL,
        back TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX cards_deck ON cards(deck_id)",
    "CREATE INDEX cards_category ON cards(category_id)",
    """CREATE TABLE concepts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(trim(name)) > 0),
        description TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE card_concepts (
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        concept_id INTEGER NOT NULL REFERENCES concepts(id) ON DELETE CASCADE,
        PRIMARY KEY (card_id, concept_id)
    )""",
    "CREATE INDEX card_concepts_concept ON card_concepts(concept_id)",
    """CREATE TABLE concept_links (
        id INTEGER PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES concepts(id) ON DELETE CASCADE,
        target_id INTEGER NOT NULL REFERENCES concepts(id) ON DELETE CASCADE,
        kind TEXT NOT NULL
            CHECK (kind IN ('prerequisite_of', 'related_to', 'part_of', 'contrasts_with')),
        created_at TEXT NOT NULL,
        UNIQUE (source_id, target_id, kind),
        CHECK (source_id <> target_id)
    )""",
    "CREATE INDEX concept_links_target ON concept_links(target_id)",
    """CREATE TABLE reviews (
        id INTEGER PRIMARY KEY,
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        response_time_ms INTEGER NOT NULL CHECK (response_time_ms >= 0),
        confidence REAL CHECK (confidence IS NULL OR confidence BETWEEN 0 AND 1),
        reviewed_at TEXT NOT NULL
    )""",
    "CREATE INDEX reviews_user_time ON reviews(user_id, reviewed_at)",
    "CREATE INDEX reviews_card_user ON reviews(card_id, user_id)",
    """CREATE TABLE card_states (
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        state INTEGER NOT NULL CHECK (state IN (1, 2, 3)),
        step INTEGER,
        stability REAL,
        difficulty REAL,
        due TEXT NOT NULL,
        last_review TEXT,
        reps INTEGER NOT NULL DEFAULT 0,
        lapses INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, card_id)
    )""",
    "CREATE INDEX card_states_due ON card_states(user_id, due)",
    """CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        title TEXT NOT NULL CHECK (length(trim(title)) > 0),
        content_sha256 TEXT NOT NULL,
        char_count INTEGER NOT NULL,
        chunk_size INTEGER NOT NULL,
        overlap INTEGER NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        start_char INTEGER NOT NULL,
        end_char INTEGER NOT NULL,
        text TEXT NOT NULL,
        UNIQUE (source_id, position)
    )""",
    """CREATE TABLE card_flags (
        id INTEGER PRIMARY KEY,
        card_id INTEGER NOT NULL REFERENCES cards(id) ON DELETE CASCADE,
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        severity TEXT NOT NULL CHECK (severity IN ('low', 'medium', 'high')),
        created_at TEXT NOT NULL,
        UNIQUE (card_id, reason)
    )""",
)

_SEARCH = (
    """CREATE VIRTUAL TABLE cards_fts USING fts5(
        front, back, tags, content='cards', content_rowid='id', tokenize='unicode61'
    )""",
    """CREATE TRIGGER cards_fts_insert AFTER INSERT ON cards BEGIN
        INSERT INTO cards_fts(rowid, front, back, tags)
        VALUES (new.id, new.front, new.back, new.tags);
    END""",
    """CREATE TRIGGER cards_fts_delete AFTER DELETE ON cards BEGIN
        INSERT INTO cards_fts(cards_fts, rowid, front, back, tags)
        VALUES ('delete', old.id, old.front, old.back, old.tags);
    END""",
    """CREATE TRIGGER cards_fts_update AFTER UPDATE OF front, back, tags ON cards BEGIN
        INSERT INTO cards_fts(cards_fts, rowid, front, back, tags)
        VALUES ('delete', old.id, old.front, old.back, old.tags);
        INSERT INTO cards_fts(rowid, front, back, tags)
        VALUES (new.id, new.front, new.back, new.tags);
    END""",
    "INSERT INTO cards_fts(cards_fts) VALUES ('rebuild')",
)

_POSTGRES_CORE = (
    *(postgres_ddl(statement) for statement in _CORE),
    # SQLite's UNIQUE COLLATE NOCASE: lower() folds ASCII only, on a COLLATE "C" column
    "CREATE UNIQUE INDEX concepts_name_nocase ON concepts (lower(name))",
)

CARD_SEARCH_TEXT = "to_tsvector('simple', front || ' ' || back || ' ' || tags)"
"""PostgreSQL's full-text document of a card; the search query repeats it to use the index."""

_POSTGRES_SEARCH = (f"CREATE INDEX cards_search ON cards USING GIN ({CARD_SEARCH_TEXT})",)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "core learning tables", _CORE, _POSTGRES_CORE),
    Migration(2, "full-text search over cards", _SEARCH, _POSTGRES_SEARCH),
    Migration(3, "change journal of tool writes", JOURNAL_SQLITE, JOURNAL_POSTGRES),
    Migration(4, "change journal keyed by change set", JOURNAL4_SQLITE, JOURNAL4_POSTGRES),
)
"""Every migration, oldest first."""

SCHEMA_VERSION = MIGRATIONS[-1].version
"""The newest schema version this code writes."""

HISTORY_TABLES: frozenset[str] = frozenset({"schema_version", JOURNAL_TABLE, SETS_TABLE})
"""Tables that record history or bookkeeping rather than a learner's data.

A comparison of the learner's data before and after a run (the evaluation's end-state check,
the undo fuzz) leaves these out, as it leaves out the full-text index's shadow tables
(``cards_fts`` and the tables SQLite names after it). A table added for history (the change
journal) is named here.
"""
