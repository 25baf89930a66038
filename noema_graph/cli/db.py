"""``noema-graph db upgrade``: create or migrate every table a deployment needs, once.

On one database URL (``--database-url``, else ``NOEMA_DATABASE_URL``, else ``--db``): the
checkpointer's and the Store's tables (LangGraph's own migrations), the event log and the Noema
learning store (its location as a run finds it: ``--data``, ``NOEMA_LEARNING_DB``, the
database itself when it is PostgreSQL, else ``noema-learning.sqlite``). Each part runs under
its own lock, so several processes (servers starting together) may run it at once; running it
again changes nothing. Servers also create their tables on first use: this command is for a
deploy step that must finish before any server starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from noema_graph.cli.errors import DatabaseUrlOpt, failure_code, resolve_database, say_error
from noema_graph.storage.urls import backend_kind, redacted

app = typer.Typer(help="Database set-up for a deployment.", no_args_is_help=True)

DbOpt = Annotated[Path | None, typer.Option("--db", help="SQLite file (default noema.sqlite).")]
DataOpt = Annotated[
    str | None,
    typer.Option("--data", help="Learning store: a SQLite file or a URL (see the module doc)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print what was done as JSON.")]


def upgrade_database(where: Path | str, data: str | None = None) -> dict[str, Any]:
    """Create or migrate the tables of a deployment at ``where``; return what was done.

    Raises:
        NoemaError: the database cannot be reached or written (the message names the fix).
    """
    from noema_graph.noema.location import learning_location, shown
    from noema_graph.noema.store import LearningStore
    from noema_graph.storage.backends import open_backend

    with open_backend(where):  # LangGraph's checkpoint and Store migrations, under a lock
        pass
    if backend_kind(where) == "postgres":
        from noema_graph.storage.postgres.eventlog import PostgresEventLog

        PostgresEventLog(str(where)).close()
    else:
        from noema_graph.storage.sqlite.eventlog import EventLog

        EventLog.open(where).close()
    learning = learning_location(data, env=os.environ, database=where)
    with LearningStore.open(learning) as store:
        report = store.migration
    return {
        "database": redacted(str(where)),
        "learning_store": shown(learning),
        "learning_schema": report.current_version,
        "learning_migrations_applied": list(report.applied),
    }


@app.command()
def upgrade(
    db: DbOpt = None,
    database_url: DatabaseUrlOpt = None,
    data: DataOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create or migrate checkpoints, Store, event log and learning store (idempotent)."""
    from noema_graph.errors import NoemaError

    where = resolve_database(db, database_url)
    try:
        done = upgrade_database(where, data)
    except NoemaError as exc:  # unreachable (exit 2) or not writable (exit 1)
        say_error(str(exc))
        raise typer.Exit(failure_code(exc)) from None
    if as_json:
        typer.echo(json.dumps(done, indent=2))
        return
    applied = done["learning_migrations_applied"]
    typer.echo(f"checkpoints, store and event log ready in {done['database']}")
    typer.echo(
        f"learning store {done['learning_store']}: schema {done['learning_schema']}"
        + (f" (applied {', '.join(map(str, applied))})" if applied else " (up to date)")
    )
