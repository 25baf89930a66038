"""``noema-graph threads``, ``history THREAD`` and ``inspect THREAD``: read a run database.

The database is ``--db FILE`` (SQLite), else ``--database-url`` (``sqlite:///FILE`` or
``postgresql://...``), else ``NOEMA_DATABASE_URL``, else ``noema.sqlite``: the same rule as
``run`` and ``resume``, with the same columns and statuses on every backend. The commands are
registered on the main app by :mod:`noema_graph.cli.app`; the inspection module (and LangGraph's
savers) load only when one of them runs.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from noema_graph.cli.errors import DatabaseUrlOpt
from noema_graph.cli.tables import Column, print_table
from noema_graph.errors import NoemaError, NotFound
from noema_graph.storage.urls import redacted

__all__ = ["history", "inspect", "threads"]

DbOpt = Annotated[
    Path | None,
    typer.Option("--db", help="SQLite file holding the checkpoints (default noema.sqlite)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
ThreadArg = Annotated[str, typer.Argument(help="Thread id (see `noema-graph threads`).")]

console = Console(soft_wrap=True)  # a long line is one line, on a terminal or piped


def _exit(message: str, fix: str) -> None:
    from noema_graph.cli.errors import usage_error

    usage_error(message, fix)


def shown(where: Path | str) -> str:
    """Return a database for a message: the file, or the URL with its password masked."""
    return str(where) if isinstance(where, Path) else redacted(where)


def flag(where: Path | str) -> str:
    """Return the option that names ``where`` again (``--db FILE``, ``--database-url URL``)."""
    return f"--db {where}" if isinstance(where, Path) else f"--database-url {shown(where)}"


def _no_thread(thread: str, where: Path | str) -> None:
    _exit(
        f"no thread {thread!r} in {shown(where)}",
        f"list them with noema-graph threads {flag(where)}",
    )


def database(db: Path | None, url: str | None) -> Path | str:
    """Return the checked database of an inspection command (exit 2 on a bad one)."""
    from noema_graph.cli.errors import resolve_database

    return resolve_database(db, url, must_exist=True)


@contextmanager
def one_line_errors() -> Generator[None]:
    """Print a library error as one line: exit 2 for a bad value or a database out of reach.

    A damaged file (it names its fix) and any other library error exit 1; a missing record
    (:class:`~noema_graph.errors.NotFound`) propagates to the command, which names it.
    """
    from noema_graph.cli.errors import failure_code, say_error

    try:
        yield
    except NotFound:
        raise  # the command says what is missing and how to list what exists
    except NoemaError as exc:
        say_error(str(exc))
        raise typer.Exit(failure_code(exc)) from exc


def threads(
    db: DbOpt = None, database_url: DatabaseUrlOpt = None, as_json: JsonOpt = False
) -> None:
    """List the threads of a run database: status, iterations, tokens, cost, last error."""
    from noema_graph.storage.inspect import threads as list_threads

    where = database(db, database_url)
    with one_line_errors():
        rows = list_threads(where)
    if as_json:
        typer.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    if not rows:
        console.print(f"no threads in {shown(where)}")
        return
    columns = ("thread", "agent", "status", "updated", "iter", "tokens", "cost $", "last error")
    print_table(console, columns, [
        (
            r.thread_id, r.agent or "-", r.status, r.updated[:19], str(r.iterations),
            str(r.tokens), "-" if r.cost is None else f"{r.cost:.6f}", r.last_error or "-",
        )
        for r in rows
    ])  # fmt: skip


def history(
    thread: ThreadArg,
    db: DbOpt = None,
    database_url: DatabaseUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List a thread's checkpoints: step, node, iteration, plan step, tokens, interrupts."""
    from noema_graph.storage.inspect import history as thread_history

    where = database(db, database_url)
    with one_line_errors():
        rows = thread_history(where, thread)
    if not rows:
        _no_thread(thread, where)
    if as_json:
        typer.echo(json.dumps([row.to_dict() for row in rows], indent=2))
        return
    columns = ("step", "node", "iter", "time", "plan step", "tokens", "paused")
    print_table(console, (*columns, Column("checkpoint", no_wrap=True)), [
        (
            str(r.step), r.node or r.source, str(r.iteration), r.time[11:23],
            r.plan_step or "-", str(r.tokens), "yes" if r.has_interrupt else "", r.checkpoint_id,
        )
        for r in rows
    ])  # fmt: skip


def inspect(
    thread: ThreadArg,
    checkpoint: Annotated[
        str | None, typer.Option("--checkpoint", "-c", help="Checkpoint id (default: latest).")
    ] = None,
    db: DbOpt = None,
    database_url: DatabaseUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one checkpoint: plan, trace, output and pending interrupts."""
    from noema_graph.storage.inspect import checkpoint as read_checkpoint

    where = database(db, database_url)
    try:
        with one_line_errors():
            state = read_checkpoint(where, thread, checkpoint)
    except KeyError:
        if checkpoint:
            fix = f"list its checkpoints with noema-graph history {thread} {flag(where)}"
            _exit(f"no checkpoint {checkpoint!r} of thread {thread!r} in {shown(where)}", fix)
        _no_thread(thread, where)
        return
    from noema_graph.cli.changes import change_lines, run_changes

    found = run_changes(where, thread)  # what the thread changed in its learning store
    if as_json:
        state = {**state, "changes": [c.model_dump(mode="json") for c in found]}
        typer.echo(json.dumps(_plain(state), indent=2, default=str))
        return
    _print_state(state)
    if found:
        console.print(f"changes ({len(found)} rows; undo with noema-graph undo {thread}):")
        for line in change_lines(found):
            console.print(f"  {line}", markup=False, highlight=False)


def _plain(value: object) -> object:
    """Turn pydantic models and messages into JSON-ready values."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _plain(dump())
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _print_state(state: dict[str, Any]) -> None:
    meta = state["__checkpoint__"]
    stored = f", {meta['format']} file" if meta.get("format") else ""
    console.print(
        f"checkpoint {meta['checkpoint_id']} (step {meta['step']}, {meta['time']}{stored})"
    )
    plan = state.get("plan")
    if plan is not None:
        steps = [(str(i), s.description, s.status) for i, s in enumerate(plan.steps, 1)]
        print_table(console, ("#", "step", "status"), steps, title=f"plan: {plan.goal}")
    trace = [
        (
            str(step.step), step.kind, getattr(step.action, "tool", None) or "-", step.status,
            step.observation or "",
        )
        for step in state.get("trace", [])
    ]  # fmt: skip
    columns = ("#", "kind", "action", "status", Column("observation", clip=80))
    print_table(console, columns, trace, title="trace")
    output = state.get("output") or {}
    if output:
        brief = {key: output.get(key) for key in ("outcome", "success", "result", "error")}
        console.print(f"output: {json.dumps(_plain(brief), default=str)[:2000]}")
    for value in state.get("__interrupts__", []):
        console.print(f"[yellow]pending interrupt:[/yellow] {_plain(value)}")
