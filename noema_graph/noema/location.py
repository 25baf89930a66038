"""Where the learning store lives: a SQLite file or a PostgreSQL database, named by one value.

A location is a path (``noema-learning.sqlite``), a ``sqlite:///path`` URL or a
``postgresql://user:password@host:port/dbname`` URL. :func:`store_location` normalises one
(a path for SQLite, the URL text for PostgreSQL: ``Path`` would fold its ``//``), and
:func:`learning_location` picks it at an edge (CLI, ``langgraph.json`` factories), in order:

1. the value given explicitly (``--data``);
2. ``NOEMA_LEARNING_DB`` (a path or a URL);
3. the run's own database (``--database-url``) when it is PostgreSQL: the learning tables sit
   beside the checkpoints, which share no table name with them;
4. ``NOEMA_DATABASE_URL`` when it is PostgreSQL;
5. :data:`~noema_graph.noema.schema.DEFAULT_LEARNING_DB`.

A SQLite database URL does not carry the learning store along (it stays its own file, as it
always was). The read-only helpers here never create a database or a table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from noema_graph.noema.schema import DEFAULT_LEARNING_DB
from noema_graph.storage.sql.dialect import dialect_of
from noema_graph.storage.urls import DATABASE_URL_ENV, redacted, sqlite_path

LEARNING_DB_ENV = "NOEMA_LEARNING_DB"
"""The environment variable naming the learning store (a path or a database URL)."""

Location = str | Path
"""A learning store location: a SQLite path, or a database URL."""


def store_location(value: Location) -> Location:
    """Return ``value`` as a location: the URL text for PostgreSQL, else the SQLite path.

    Raises:
        ConfigurationError: a URL with an unsupported scheme.
    """
    return str(value) if dialect_of(value) == "postgres" else sqlite_path(value)


def shown(location: Location) -> str:
    """Return ``location`` for a message: a URL without its password."""
    return redacted(str(location))


def learning_location(
    explicit: Location | None,
    *,
    env: Mapping[str, str],
    database: Location | None = None,
) -> Location:
    """Return the learning store a run uses (see the module docstring for the order).

    Args:
        explicit: The location the user gave (``--data``), if any.
        env: The environment (only the edge reads it).
        database: The run's checkpoint database, if any.
    """
    candidates = (explicit, env.get(LEARNING_DB_ENV) or None)
    for value in candidates:
        if value is not None:
            return store_location(value)
    for value in (database, env.get(DATABASE_URL_ENV) or None):
        if value is not None and dialect_of(value) == "postgres":
            return str(value)
    return DEFAULT_LEARNING_DB
