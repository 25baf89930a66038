"""The format of a SQLite checkpoint file: ``stock`` (LangGraph's saver reads it) or ``compact``.

A stock file holds LangGraph's plain msgpack values: ``SqliteSaver`` with its default
serializer lists and loads every checkpoint. A compact file (``sqlite_checkpointer(path,
compact=True)``, ``noema-graph run --compact``) stores large values zlib-compressed (older
compact files also stored a trace step's observation as a reference to its ToolMessage);
only noema's serializer reads it (``SqliteSaver(conn,
serde=noema_graph.persistence.serializer())``), and ``noema-graph export --stock`` converts
it. A compact file carries :data:`COMPACT_APPLICATION_ID` as its SQLite
``application_id``; files noema wrote before the marker existed were all compact and are
recognised by their rows (:func:`file_format`).

A file stays in the format it has: opened without ``compact=True``, a compact file keeps being
written compact, so a stock reader never meets a file that is half of each unmarked.
``compact=True`` on a stock file marks it compact from then on (noema reads its older rows
as they are; ``export --stock`` converts the whole file back).
"""

from __future__ import annotations

import sqlite3
from typing import Literal

from noema_graph.state.models import OBSERVATION_FROM
from noema_graph.storage.serde import COMPRESSED
from noema_graph.storage.sqlite.damage import is_corrupt

COMPACT_APPLICATION_ID = 0x4E6F4563  # "NoEc"
"""SQLite ``application_id`` of a compact noema checkpoint file."""
Format = Literal["compact", "stock"]
"""A checkpoint file's format."""

LEGACY_ROWS = 64
"""Rows of each table :func:`file_format` reads to recognise an unmarked compact file."""
_LEGACY_SQL = (
    f"SELECT 1 FROM (SELECT type FROM checkpoints LIMIT {LEGACY_ROWS}) WHERE type = ?",
    f"SELECT 1 FROM (SELECT type FROM writes LIMIT {LEGACY_ROWS}) WHERE type = ?",
    f"SELECT 1 FROM (SELECT value FROM writes WHERE channel = 'trace' LIMIT {LEGACY_ROWS}) "
    "WHERE instr(value, ?) > 0",
)


def application_id(conn: sqlite3.Connection) -> int:
    """Return the file's SQLite ``application_id`` (0 when unset)."""
    return int(conn.execute("PRAGMA application_id").fetchone()[0])


def file_format(conn: sqlite3.Connection) -> Format:
    """Return the format of the file ``conn`` opens: its marker, else what its rows hold.

    A file without the marker is compact when one of the first :data:`LEGACY_ROWS` rows of
    its tables is compressed or refers to a ToolMessage (noema wrote every file compact
    before the marker existed: its checkpoints are compressed from the first), else stock.
    Opening reads a few pages, not the file.
    """
    if application_id(conn) == COMPACT_APPLICATION_ID:
        return "compact"
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"checkpoints", "writes"} <= tables:
        return "stock"
    params = ((COMPRESSED,), (COMPRESSED,), (OBSERVATION_FROM.encode(),))
    legacy = any(
        conn.execute(sql, p).fetchone() for sql, p in zip(_LEGACY_SQL, params, strict=True)
    )
    return "compact" if legacy else "stock"


def mark_compact(conn: sqlite3.Connection) -> None:
    """Set the compact marker on the file ``conn`` opens (a no-op when it is set)."""
    if application_id(conn) == COMPACT_APPLICATION_ID:
        return
    try:
        conn.execute(f"PRAGMA application_id={COMPACT_APPLICATION_ID}")
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):  # a read-only file is read, never written
            raise


def writes_compact(conn: sqlite3.Connection, compact: bool) -> bool:
    """Return whether a writer of the file ``conn`` opens writes compact, marking it if so.

    ``compact`` asks for it; a file already compact stays compact whatever was asked. A file
    too damaged to tell is left as its marker says (its reads raise the damage).
    """
    try:
        found = file_format(conn)
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        found = "compact" if application_id(conn) == COMPACT_APPLICATION_ID else "stock"
    if compact or found == "compact":
        mark_compact(conn)
        return True
    return False
