"""``noema-graph doctor DB [--repair]``: check a checkpoint file, recover a damaged one.

Without DB, ``--database-url`` or ``NOEMA_DATABASE_URL`` names the database: a
``sqlite:///FILE`` is checked as the file, a PostgreSQL database by
:mod:`noema_graph.storage.postgres.doctor` (tables, schema versions, orphan rows, every row decoded;
the
report says what it cannot check, and ``--repair`` is refused there).

Registered on the main app by :func:`register`; the checks
(:mod:`noema_graph.storage.sqlite.doctor`) and
the recovery (:mod:`noema_graph.storage.sqlite.recover`) load only when the command runs. Exit
status: 0 the
file is healthy, 1 it is damaged or not a checkpoint file (also after ``--repair`` wrote the
recovered copy), 2 a usage error (no such file, ``--out`` exists, a database out of reach).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from noema_graph.cli.errors import DatabaseUrlOpt
from noema_graph.storage.urls import (
    DATABASE_URL_ENV,
    DatabaseUnavailable,
    backend_kind,
    sqlite_path,
)

if TYPE_CHECKING:
    from noema_graph.storage.sqlite.doctor import Report

__all__ = ["doctor", "register"]

HEALTHY, DAMAGED, USAGE = 0, 1, 2

DbArg = Annotated[
    Path | None,
    typer.Argument(
        help="The SQLite file holding the checkpoints (default: --database-url, else "
        "NOEMA_DATABASE_URL)."
    ),
]
RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Recover what can be read into a NEW file (see --out); the original is untouched.",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Where --repair writes (default: DB.recovered.sqlite beside DB)."),
]
QuickOpt = Annotated[
    bool, typer.Option("--quick", help="PRAGMA quick_check instead of integrity_check.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _usage(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(USAGE)


def doctor(
    db: DbArg = None,
    database_url: DatabaseUrlOpt = None,
    repair: RepairOpt = False,
    out: OutOpt = None,
    quick: QuickOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Check a checkpoint file (SQLite integrity, rows, thread heads); --repair recovers it.

    On PostgreSQL (--database-url): the tables, their schema versions, orphan rows and every
    row decoded; what cannot be checked there is listed.
    """
    from noema_graph.errors import ConfigurationError
    from noema_graph.storage.sqlite.damage import DamagedFileError
    from noema_graph.storage.sqlite.recover import repair as recover

    if out is not None and not repair:
        raise _usage("--out only applies with --repair")
    where = _where(db, database_url)
    if isinstance(where, str) and repair:
        raise _usage(
            "--repair works on SQLite files only (fix: on PostgreSQL, restore a backup with "
            "pg_restore; doctor without --repair says what is wrong)"
        )
    report = _diagnose(where, quick=quick)
    db = where if isinstance(where, Path) else None
    result: dict[str, object] = {"report": report.to_dict()}
    lines = report.lines()
    if repair and report.healthy:
        lines.append("nothing to repair")
    elif repair and not (report.is_sqlite and report.is_checkpoint_file):
        lines.append("nothing to repair: this is not a checkpoint file (the original is untouched)")
    elif repair:
        assert db is not None  # --repair was refused for a database URL above
        try:
            recovery = recover(db, out)
        except ConfigurationError as exc:
            raise _usage(str(exc)) from exc
        except DamagedFileError as exc:
            lines.append(f"recovery failed: {exc}")
            result["recovery"] = {"error": str(exc)}
        else:
            lines += recovery.lines()
            result["recovery"] = recovery.to_dict()
    typer.echo(json.dumps(result, indent=2) if as_json else "\n".join(lines))
    raise typer.Exit(HEALTHY if report.healthy else DAMAGED)


def _where(db: Path | None, url: str | None) -> Path | str:
    """Return the file DB names, else the database of --database-url / NOEMA_DATABASE_URL."""
    from noema_graph.errors import FieldError

    if db is not None and url is not None:
        raise _usage("DB and --database-url exclude each other (fix: pass only one)")
    chosen = db or url or os.environ.get(DATABASE_URL_ENV)
    if chosen is None:
        raise _usage(
            "no database to check (fix: pass the SQLite file, or --database-url "
            f"postgresql://..., or set {DATABASE_URL_ENV})"
        )
    try:
        kind = backend_kind(chosen)
    except FieldError as exc:
        raise _usage(str(exc)) from exc
    return str(chosen) if kind == "postgres" else sqlite_path(chosen)


def _diagnose(where: Path | str, *, quick: bool) -> Report:
    """Run the checks of ``where``'s backend; a bad value or a server out of reach exits 2."""
    from noema_graph.errors import ConfigurationError
    from noema_graph.storage.sqlite.doctor import diagnose

    try:
        if isinstance(where, Path):
            return diagnose(where, quick=quick)
        from noema_graph.storage.postgres.doctor import diagnose_postgres

        return diagnose_postgres(where)
    except (ConfigurationError, DatabaseUnavailable) as exc:
        raise _usage(str(exc)) from exc


def register(app: typer.Typer) -> None:
    """Add the ``doctor`` command to ``app`` (the main ``noema-graph`` app)."""
    app.command("doctor")(doctor)
