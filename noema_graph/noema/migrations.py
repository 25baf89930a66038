"""Versioned schema migrations, run as a sans-IO operation by either driver.

The ``schema_version`` table records each applied migration. :func:`migrate` applies the
missing ones in order inside the caller's transaction (so a failing step leaves the database
as it was), does nothing on an up-to-date database, and refuses a database from a newer
version with :class:`~noema_graph.noema.errors.SchemaVersionError`. On PostgreSQL the
caller's transaction holds the writers' advisory lock (:mod:`noema_graph.storage.sql.dialect`), so
processes opening one database at once migrate it one after the other, and the later ones
find nothing left to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from noema_graph.noema.clock import to_db, utc_now
from noema_graph.noema.errors import SchemaVersionError
from noema_graph.noema.schema import MIGRATIONS, Migration
from noema_graph.storage.sql.dialect import DialectName
from noema_graph.storage.sql.driver import Op, execute, fetch_one

_CREATE_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""


class MigrationReport(BaseModel):
    """What :func:`migrate` did."""

    model_config = ConfigDict(frozen=True)

    previous_version: int
    current_version: int
    applied: tuple[int, ...]


def current_version() -> Op[int]:
    """Return the database's schema version (0 for an empty database)."""
    yield from execute(_CREATE_VERSION_TABLE)
    row = yield from fetch_one("SELECT COALESCE(MAX(version), 0) AS v FROM schema_version")
    return int(row["v"]) if row is not None else 0


_VERSION_TABLE_EXISTS = (
    "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
)
_POSTGRES_VERSION_TABLE_EXISTS = (
    "SELECT COUNT(*) AS n FROM information_schema.tables"
    " WHERE table_schema = current_schema() AND table_name = 'schema_version'"
)


def up_to_date(migrations: Sequence[Migration] = MIGRATIONS) -> Op[MigrationReport | None]:
    """Return the report of a database already at the newest version, else None; read-only.

    Opening a store runs this first, in a read transaction, so the usual open (nothing to
    migrate) takes no write lock; anything else goes on to :func:`migrate`.
    """
    newest = migrations[-1].version if migrations else 0
    table = yield from fetch_one(_VERSION_TABLE_EXISTS, postgres=_POSTGRES_VERSION_TABLE_EXISTS)
    if table is None or int(table["n"]) == 0:
        return None
    row = yield from fetch_one("SELECT COALESCE(MAX(version), 0) AS v FROM schema_version")
    found = int(row["v"]) if row is not None else 0
    if found != newest:
        return None
    return MigrationReport(previous_version=found, current_version=found, applied=())


def migrate(
    migrations: Sequence[Migration] = MIGRATIONS, *, dialect: DialectName = "sqlite"
) -> Op[MigrationReport]:
    """Bring the schema up to the newest of ``migrations``.

    Args:
        migrations: Ordered migrations; tests pass a longer list to simulate newer code.
        dialect: The database's SQL (which statements each migration runs).

    Returns:
        The versions before and after, and which migrations ran.

    Raises:
        SchemaVersionError: The database is newer than the newest migration.
    """
    newest = migrations[-1].version if migrations else 0
    found = yield from current_version()
    if found > newest:
        raise SchemaVersionError(found, newest)
    applied: list[int] = []
    for migration in migrations:
        if migration.version <= found:
            continue
        for statement in migration.statements_for(dialect):
            yield from execute(statement)
        yield from execute(
            "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, to_db(utc_now())),
        )
        applied.append(migration.version)
    return MigrationReport(
        previous_version=found, current_version=max(found, newest), applied=tuple(applied)
    )
