"""``noema-graph changes THREAD`` and ``undo THREAD [--step N]``: review and revert a run.

Both find the run's learning store as ``run`` does (``--data``, else the store the thread's
runs used, read from its checkpoints in ``--db`` / ``--database-url``, else the default).
Bad input is one line on stderr and exit 2: an unknown thread, a thread with no changes, a
thread whose runs wrote to another learning store, a journal row naming a table the store no
longer has. A conflict (a row changed since the run wrote it) is exit 1; nothing is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from noema_graph.cli.errors import (
    EXIT_UNSUCCESSFUL,
    LEARNING_TABLES,
    DatabaseUrlOpt,
    check_database,
    resolve_database,
    say_error,
    usage_error,
)

if TYPE_CHECKING:
    from noema_graph.noema.journal import Change, UndoReport

__all__ = ["change_lines", "changes", "undo"]

console = Console(soft_wrap=True)
ThreadArg = Annotated[str, typer.Argument(help="Thread id of a run (or an undo's id).")]
DataOpt = Annotated[
    str | None,
    typer.Option(
        "--data",
        help="Learning store (SQLite file or postgresql:// URL); default: the store the "
        "thread's runs used, else run's default.",
    ),
]
DbOpt = Annotated[Path | None, typer.Option("--db", help="SQLite file of the runs' checkpoints.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of lines.")]


def _shown(where: Path | str) -> str:
    from noema_graph.storage.urls import redacted

    return str(where) if isinstance(where, Path) else redacted(where)


def _recipe_store(where: Path | str, thread: str) -> Path | str | None:
    """Return the learning store the thread's runs used, or None (no such run, no recipe)."""
    from noema_graph.cli.runs import RUN_DATABASE, saved_recipe
    from noema_graph.noema.location import store_location

    if isinstance(where, Path) and not where.exists():
        return None
    recipe = saved_recipe(where, thread)
    if recipe is None or recipe.agent is None:
        return None
    return where if recipe.data == RUN_DATABASE else store_location(recipe.data)


def _same(a: Path | str, b: Path | str) -> bool:
    if isinstance(a, Path) and isinstance(b, Path):
        return a.resolve() == b.resolve()
    return str(a) == str(b)


def _locate(
    thread: str, data: str | None, db: Path | None, url: str | None
) -> tuple[Path | str, Path | str, Path | str | None]:
    """Return (learning store, checkpoint database, the store the thread's runs used)."""
    from noema_graph.noema.location import learning_location

    where = resolve_database(db, url)
    used = _recipe_store(where, thread)
    if data is not None:
        store = learning_location(data, env=os.environ, database=where)
    elif used is not None:
        store = used
    else:
        store = learning_location(None, env=os.environ, database=where)
    if isinstance(store, Path):
        if not store.exists() and used is None and data is None:
            usage_error(
                f"unknown thread {thread!r}: no run of it in {_shown(where)}",
                "list runs with noema-graph threads; pass --db/--database-url and --data "
                "of the run",
            )
        if not store.exists():
            usage_error(f"no learning store at {store}", "pass --data FILE (the run's store)")
        check_database(store, flag="--data", ours=LEARNING_TABLES)
    return store, where, used


def _read(thread: str, store: Path | str) -> list[Change]:
    from noema_graph.noema.history import changes as read

    return read(thread, db=store)


def _explain_none(
    thread: str, store: Path | str, where: Path | str, used: Path | str | None
) -> None:
    if used is not None and not _same(used, store):
        usage_error(
            f"thread {thread!r} belongs to another learning store: its runs wrote to "
            f"{_shown(used)}, not {_shown(store)}",
            f"pass --data {_shown(used)}",
        )
    if used is not None:
        usage_error(f"thread {thread!r} made no changes to {_shown(store)}", None)
    usage_error(
        f"unknown thread {thread!r}: no run of it in {_shown(where)} and no change in "
        f"{_shown(store)}",
        "list runs with noema-graph threads; pass --db/--database-url and --data of the run",
    )


def change_lines(found: Sequence[Change]) -> list[str]:
    """Return ``changes``' text: one heading per call, one line per row."""
    lines: list[str] = []
    heading = None
    for change in found:
        step = f"step {change.step}, " if change.step is not None else ""
        dry = ", dry run" if change.dry_run else ""
        now = (
            f"{change.thread_id} (undo of {change.reverts})"
            if change.tool == "undo"
            else f"{step}{change.tool} call {change.call_id}{dry}"
        )
        if now != heading:
            lines.append(now)
            heading = now
        lines.append(f"  {change.text}")
    return lines


def changes(
    thread: ThreadArg,
    data: DataOpt = None,
    db: DbOpt = None,
    database_url: DatabaseUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what a run changed in the learning store, row by row (dry runs: "would")."""
    store, where, used = _locate(thread, data, db, database_url)
    found = _read(thread, store)
    if not found:
        _explain_none(thread, store, where, used)
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in found], indent=2))
        return
    own = [c for c in found if c.thread_id == thread]
    tables = sorted({c.table for c in own})
    console.print(f"thread {thread}: {len(own)} row change(s) in {', '.join(tables) or 'no table'}")
    for line in change_lines(found):
        console.print(line, markup=False, highlight=False)


def undo(
    thread: ThreadArg,
    step: Annotated[
        int | None,
        typer.Option(
            "--step",
            min=0,
            help="Undo only the changes from LangGraph step N on (the step `changes` shows).",
        ),
    ] = None,
    data: DataOpt = None,
    db: DbOpt = None,
    database_url: DatabaseUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Revert a run's changes (or those from --step N on), newest first, in one transaction.

    If a row changed since the run wrote it, nothing is written: the conflicting rows are
    named and the exit code is 1. The undo is journaled under its own id: `undo UNDO_ID`
    takes it back.
    """
    from noema_graph.noema.history import undo as revert
    from noema_graph.noema.journal import JournalError, UndoConflict

    store, where, used = _locate(thread, data, db, database_url)
    if not _read(thread, store):
        _explain_none(thread, store, where, used)
    try:
        report: UndoReport = revert(thread, db=store, step=step)
    except UndoConflict as exc:
        say_error(str(exc))
        raise typer.Exit(EXIT_UNSUCCESSFUL) from None
    except JournalError as exc:
        usage_error(str(exc))
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    again = f"noema-graph undo {report.undo_id}"
    if data is not None or used is not None:
        again += f" --data {_shown(store)}"
    console.print(
        f"undid {report.rows} row change(s) of {thread} in {', '.join(report.tables)}"
        f" ({len(report.calls)} call(s)); take it back with: {again}",
        markup=False,
        highlight=False,
    )


def with_changes(output: Mapping[str, Any], store: Path | str, thread: str) -> dict[str, object]:
    """Return a run's output contract with ``metadata.changes`` (count, tables, dry_run)."""
    from noema_graph.noema.history import change_summary

    if not output or "metadata" not in output:
        return dict(output)
    summary = change_summary(thread, store).model_dump()
    return {**output, "metadata": {**output["metadata"], "changes": summary}}


def dry_run_lines(store: Path | str, thread: str) -> list[str]:
    """Return what a dry run would have changed: one line per row (the journal's text)."""
    return [c.text for c in _read(thread, store) if c.dry_run and c.thread_id == thread]


def run_changes(where: Path | str, thread: str) -> list[Change]:
    """Return what ``thread`` changed in the learning store its runs used ([] if unknown)."""
    used = _recipe_store(where, thread)
    if used is None or (isinstance(used, Path) and not used.exists()):
        return []
    return _read(thread, used)
