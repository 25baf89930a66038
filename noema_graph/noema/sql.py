"""SQL shared by the domain operations and the demo-data writer (both databases)."""

from __future__ import annotations

INSERT_USER = "INSERT INTO users (name, created_at) VALUES (?, ?)"
INSERT_DECK = "INSERT INTO decks (name, description, created_at) VALUES (?, ?, ?)"
INSERT_CATEGORY = "INSERT INTO categories (name, parent_id) VALUES (?, ?)"
INSERT_CARD = """INSERT INTO cards
    (deck_id, category_id, kind, front, back, tags, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_CONCEPT = "INSERT INTO concepts (name, description) VALUES (?, ?)"
INSERT_CARD_CONCEPT = """INSERT INTO card_concepts (card_id, concept_id) VALUES (?, ?)
    ON CONFLICT (card_id, concept_id) DO NOTHING"""
INSERT_LINK = """INSERT INTO concept_links (source_id, target_id, kind, created_at)
    VALUES (?, ?, ?, ?) ON CONFLICT (source_id, target_id, kind) DO NOTHING"""
INSERT_REVIEW = """INSERT INTO reviews
    (card_id, user_id, rating, response_time_ms, confidence, reviewed_at)
    VALUES (?, ?, ?, ?, ?, ?)"""
UPSERT_STATE = """INSERT INTO card_states
    (user_id, card_id, state, step, stability, difficulty, due, last_review, reps, lapses)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (user_id, card_id) DO UPDATE SET
        state = excluded.state, step = excluded.step, stability = excluded.stability,
        difficulty = excluded.difficulty, due = excluded.due,
        last_review = excluded.last_review, reps = excluded.reps, lapses = excluded.lapses"""
INSERT_SOURCE = """INSERT INTO sources
    (title, content_sha256, char_count, chunk_size, overlap, created_at)
    VALUES (?, ?, ?, ?, ?, ?)"""
INSERT_CHUNK = """INSERT INTO chunks (source_id, position, start_char, end_char, text)
    VALUES (?, ?, ?, ?, ?)"""

CONTENT_TABLES: tuple[str, ...] = (
    "users",
    "decks",
    "categories",
    "cards",
    "concepts",
    "card_concepts",
    "concept_links",
    "reviews",
    "card_states",
    "sources",
    "chunks",
    "card_flags",
)
"""Tables holding learning content (everything except bookkeeping and search indexes)."""
