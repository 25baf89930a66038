"""The learning store: a migrated SQLite or PostgreSQL database, with a sync and an async face.

Both faces run the same sans-IO operations (:mod:`noema_graph.storage.sql.driver`) on either
database (:mod:`noema_graph.storage.sql.connections`), so the SQL and the logic are shared; each
call is one transaction. A store is opened at a location: a file path or ``sqlite:///path``,
or a ``postgresql://user:password@host:port/dbname`` URL.

Example:
    >>> with LearningStore.open(path) as store:  # doctest: +SKIP
    ...     due = store.call("list_due_cards", user_id=1)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ValidationError

from noema_graph.closing import Closeable
from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.journal import (
    Change,
    ChangeContext,
    WouldChange,
    journaled,
    record_dry_run,
    row_changes,
)
from noema_graph.noema.journal_text import readable
from noema_graph.noema.migrations import MigrationReport, current_version, migrate, up_to_date
from noema_graph.noema.operations import DOMAIN_OPERATIONS, DomainOperation
from noema_graph.noema.schema import MIGRATIONS, Migration
from noema_graph.storage.sql.connections import connect_async, connect_sync
from noema_graph.storage.sql.dialect import DialectName
from noema_graph.storage.sql.driver import AsyncConnection, Op, SyncConnection, run_async, run_sync

T = TypeVar("T")


class DryRun(BaseModel):
    """What a write would have done: the operation's result and its would-be changes.

    Nothing was written to the learner's data; the changes are in the journal, marked
    ``dry_run``.
    """

    result: Any
    changes: list[Change]

    def lines(self) -> list[str]:
        """Return one readable line per would-be change."""
        return [change.text for change in self.changes]


def _operation(name: str) -> DomainOperation:
    try:
        return DOMAIN_OPERATIONS[name]
    except KeyError:
        raise ToolInputError(
            "name", f"no domain operation {name!r}", fix=f"use one of {sorted(DOMAIN_OPERATIONS)}"
        ) from None


def validate_arguments(name: str, arguments: dict[str, object]) -> BaseModel:
    """Validate ``arguments`` for operation ``name``; errors name the field and the fix.

    Raises:
        ToolInputError: Unknown operation, or arguments the input model rejects; ``field`` is
            the dotted path of the first problem (``cards.0.front``), the message lists all.
    """
    operation = _operation(name)
    try:
        return operation.input_model.model_validate(arguments)
    except ValidationError as exc:
        problems = exc.errors(include_url=False)
        first = ".".join(str(part) for part in problems[0]["loc"]) or "arguments"
        message = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in problems
        )
        fields = sorted(operation.input_model.model_fields)
        raise ToolInputError(
            first, message, fix=f"{name} takes {', '.join(fields)} (see its JSON schema)"
        ) from None


class LearningStore(Closeable):
    """Synchronous store (sqlite3 or psycopg), for scripts, notebooks and the demo writer.

    Attributes:
        db: The connection operations run on.
        connection: The driver's own connection (``sqlite3.Connection`` or psycopg's), for
            SQLite-specific checks such as PRAGMAs.
        dialect: ``"sqlite"`` or ``"postgres"``.
        migration: What opening the store migrated.
    """

    def __init__(self, db: SyncConnection, report: MigrationReport) -> None:
        """Wrap an open, migrated connection; prefer :meth:`open`."""
        self.db = db
        self.connection: Any = getattr(db, "raw", db)
        self.dialect: DialectName = db.dialect
        self.migration = report

    @classmethod
    def open(
        cls,
        location: str | Path,
        *,
        migrations: Sequence[Migration] = MIGRATIONS,
        pooled: bool = False,
    ) -> Self:
        """Open (creating if needed) and migrate the database at ``location``.

        Args:
            location: A SQLite file path or ``sqlite:///`` URL, or a ``postgresql://`` URL.
            migrations: The schema; tests pass a longer list to simulate newer code.
            pooled: On PostgreSQL, borrow a connection from this process's pool (for stores
                opened per call, such as the domain tools'); closing gives it back.

        Raises:
            SchemaVersionError: The database was written by a newer schema.
            ConfigurationError: An unsupported URL, or PostgreSQL support not installed.
            DatabaseUnavailable: The PostgreSQL server could not be reached.
        """
        db = connect_sync(location, pooled=pooled)
        try:
            report = run_sync(db, up_to_date(migrations), write=False) or run_sync(
                db, migrate(migrations, dialect=db.dialect)
            )
        except BaseException:
            db.close()
            raise
        return cls(db, report)

    def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run one operation in its own transaction."""
        return run_sync(self.db, op, write=write)

    def call(self, name: str, /, **arguments: object) -> Any:
        """Validate ``arguments`` and run the domain operation called ``name``."""
        params = validate_arguments(name, arguments)
        operation = DOMAIN_OPERATIONS[name]
        return self.run(operation.function(params), write=operation.writes)

    def call_journaled(self, name: str, arguments: dict[str, object], change: ChangeContext) -> Any:
        """Run operation ``name`` like :meth:`call`, its writes journaled under ``change``.

        A read operation runs as :meth:`call` does. With ``change.dry_run`` nothing is
        written but the would-be changes; the return value is then a :class:`DryRun`.

        Raises:
            ThreadUndone: An undo of the thread is in effect (a resumed step).
        """
        params = validate_arguments(name, arguments)
        operation = DOMAIN_OPERATIONS[name]
        if not operation.writes:
            return self.run(operation.function(params), write=False)
        try:
            return self.run(journaled(operation.function(params), change))
        except WouldChange as would:
            self.run(record_dry_run(would.rows))
            changes = self.run(readable(row_changes(would.rows)), write=False)
            return DryRun(result=would.result, changes=changes)

    def schema_version(self) -> int:
        """Return the database's schema version."""
        return self.run(current_version(), write=False)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()


class AsyncLearningStore:
    """Asynchronous store (aiosqlite or psycopg), for agents; calls are serialised by a lock.

    Attributes are those of :class:`LearningStore`.
    """

    def __init__(self, db: AsyncConnection, report: MigrationReport) -> None:
        """Wrap an open, migrated connection; prefer :meth:`open`."""
        self.db = db
        self.connection: Any = getattr(db, "raw", db)
        self.dialect: DialectName = db.dialect
        self.migration = report
        self._lock = asyncio.Lock()

    @classmethod
    async def open(
        cls, location: str | Path, *, migrations: Sequence[Migration] = MIGRATIONS
    ) -> Self:
        """Open (creating if needed) and migrate the database at ``location``.

        Raises:
            SchemaVersionError: The database was written by a newer schema.
            ConfigurationError: An unsupported URL, or PostgreSQL support not installed.
            DatabaseUnavailable: The PostgreSQL server could not be reached.
        """
        db = await connect_async(location)
        try:
            report = await run_async(db, up_to_date(migrations), write=False) or await run_async(
                db, migrate(migrations, dialect=db.dialect)
            )
        except BaseException:
            await db.close()
            raise
        return cls(db, report)

    async def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run one operation in its own transaction."""
        async with self._lock:
            return await run_async(self.db, op, write=write)

    async def call(self, name: str, /, **arguments: object) -> Any:
        """Validate ``arguments`` and run the domain operation called ``name``."""
        params = validate_arguments(name, arguments)
        operation = DOMAIN_OPERATIONS[name]
        return await self.run(operation.function(params), write=operation.writes)

    def handler(self, name: str) -> Callable[..., Awaitable[Any]]:
        """Return ``async (**arguments) -> result`` for operation ``name``, for a tool spec."""
        _operation(name)

        async def handle(**arguments: object) -> Any:
            return await self.call(name, **arguments)

        handle.__name__ = name
        handle.__doc__ = DOMAIN_OPERATIONS[name].description
        return handle

    async def call_journaled(
        self, name: str, arguments: dict[str, object], change: ChangeContext
    ) -> Any:
        """Async twin of :meth:`LearningStore.call_journaled`."""
        params = validate_arguments(name, arguments)
        operation = DOMAIN_OPERATIONS[name]
        if not operation.writes:
            return await self.run(operation.function(params), write=False)
        try:
            return await self.run(journaled(operation.function(params), change))
        except WouldChange as would:
            await self.run(record_dry_run(would.rows))
            changes = await self.run(readable(row_changes(would.rows)), write=False)
            return DryRun(result=would.result, changes=changes)

    async def schema_version(self) -> int:
        """Return the database's schema version."""
        return await self.run(current_version(), write=False)

    async def close(self) -> None:
        """Close the connection."""
        await self.db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
