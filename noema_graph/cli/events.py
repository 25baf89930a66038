"""``noema-graph stats`` and ``noema-graph events``, and the CLI's logging set-up.

Mount with ``app.add_typer(observability_app)`` or register the two commands; call
:func:`configure_logging` from the ``--log-json`` callback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from noema_graph.cli.errors import DatabaseUrlOpt, resolve_database
from noema_graph.cli.tables import Cell, Column, print_table
from noema_graph.observability.logs import configure_logging
from noema_graph.storage.urls import redacted

if TYPE_CHECKING:  # the event log and metrics load with the command that reads them
    from noema_graph.storage.sqlite.eventlog import LoggedEvent

__all__ = ["app", "configure_logging", "events", "stats"]

DbOpt = Annotated[
    Path | None, typer.Option("--db", help="SQLite file holding the event log (noema.sqlite).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]

STAT_FIGURES = ("runs", "success", "avg ms", "avg iter", "avg $")
app = typer.Typer(help="Run metrics and the event log.", no_args_is_help=True)
console = Console(soft_wrap=True)  # a long line is one line, on a terminal or piped


def _events_or_exit(
    where: Path | str, *, thread: str | None = None, trace: str | None = None
) -> list[LoggedEvent]:
    """Return the events at ``where`` (a checked SQLite file, or a PostgreSQL URL)."""
    from noema_graph.cli.errors import failure_code, say_error
    from noema_graph.errors import NoemaError
    from noema_graph.storage.postgres.eventlog import read_events_at

    try:
        return read_events_at(where, thread_id=thread, trace_id=trace)
    except NoemaError as exc:  # PostgreSQL unreachable: one line naming it, exit 2
        say_error(str(exc))
        raise typer.Exit(failure_code(exc)) from None


def _known_thread(where: Path | str, thread: str) -> bool:
    """Return True when ``thread`` has checkpoints at ``where`` (a run without logged events)."""
    from noema_graph.storage.backends import open_backend
    from noema_graph.storage.inspect import history

    if isinstance(where, Path):
        return bool(history(where, thread))  # read-only: the file is not set up for writing
    with open_backend(where) as backend:
        return backend.checkpointer.get_tuple({"configurable": {"thread_id": thread}}) is not None


@app.command()
def stats(db: DbOpt = None, database_url: DatabaseUrlOpt = None, as_json: JsonOpt = False) -> None:
    """Show per-agent metrics rebuilt from the event log: runs, success, time, cost, tools."""
    from noema_graph.observability.metrics import MetricsRegistry

    where = resolve_database(db, database_url, must_exist=True)
    summaries = MetricsRegistry.from_events(_events_or_exit(where)).snapshot()
    if as_json:
        typer.echo(json.dumps({k: vars(v) for k, v in summaries.items()}, indent=2))
        return
    if not summaries:
        console.print(f"no finished runs in {redacted(str(where))}")
        return
    columns = ("agent", *(Column(h, "right") for h in STAT_FIGURES), "tools", "errors")
    rows = [
        (
            name,
            str(s.executions),
            f"{s.success_rate:.0%}",
            f"{s.avg_execution_ms:.0f}",
            f"{s.avg_iterations:.1f}",
            f"{s.avg_cost_usd:.6f}",
            ", ".join(f"{t}={n}" for t, n in sorted(s.tool_usage.items())) or "-",
            ", ".join(f"{c}={r:.0%}" for c, r in sorted(s.error_rate_by_code.items())) or "-",
        )
        for name, s in summaries.items()
    ]
    print_table(console, columns, rows)


@app.command()
def events(
    thread: Annotated[str, typer.Argument(help="Thread id.")],
    trace: Annotated[str | None, typer.Option("--trace", help="Only this trace id.")] = None,
    db: DbOpt = None,
    database_url: DatabaseUrlOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the event log of a thread (optionally one trace); flags tool calls in flight.

    An unknown thread exits with status 2.
    """
    from noema_graph.cli.errors import usage_error

    where = resolve_database(db, database_url, must_exist=True)
    shown = redacted(str(where))
    found = _events_or_exit(where, thread=thread, trace=trace)
    if not found and trace is None and not _known_thread(where, thread):
        usage_error(f"no thread {thread!r} in {shown}", "list them with noema-graph threads")
    if as_json:
        typer.echo(json.dumps([e.as_dict() for e in found], indent=2, default=str))
        return
    if not found:
        console.print(f"no events for thread {thread!r} in {shown}")
        return
    done = {(e.trace_id, e.call_id) for e in found if e.type == "tool.completed"}
    columns = ("#", "time", "event", "step", "tool", "status", Column("details", clip=80))
    print_table(console, columns, [_event_row(e, done) for e in found])


def _event_row(event: LoggedEvent, done: set[tuple[str | None, str | None]]) -> list[Cell]:
    """Return the row of ``event``; a call without its ``tool.completed`` is in flight."""
    status: Cell = event.status or ""
    if event.type == "tool.invoked" and (event.trace_id, event.call_id) not in done:
        status = Text("in flight", style="yellow")
    details = json.dumps(event.data, default=str)
    step = str(event.step or "")
    return [str(event.seq), event.ts[11:23], event.type, step, event.tool or "", status, details]
