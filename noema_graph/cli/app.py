"""The ``noema-graph`` command line: run, ask, resume, prune, demo-data, agents, mcp.

Rich output lives here and nowhere else in the package. Graphs, models and storage are
imported inside the commands that use them, so ``noema-graph --help`` starts in a fraction
of a second (``tests/test_imports.py`` keeps it that way). Exit codes and the one-line
errors are in :mod:`noema_graph.cli.errors`, the live view in :mod:`noema_graph.cli.live`.

A program that embeds the CLI chooses the chat model of ``run``, ``ask`` and ``resume`` with
a :data:`ModelFactory`: ``main(argv, model_factory=...)``, or ``CliOptions(model_factory=...)``
as click's ``obj`` (``CliRunner().invoke(app, argv, obj=CliOptions(...))`` in tests).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast
from uuid import uuid4

import typer
from rich.console import Console
from rich.text import Text

from noema_graph.cli import changes as changes_cli
from noema_graph.cli import db as cli_db
from noema_graph.cli import doctor as doctor_cli
from noema_graph.cli import events as observability_cli
from noema_graph.cli import export as export_cli
from noema_graph.cli import inspect as inspect_cli
from noema_graph.cli.errors import (
    DEFAULT_DB,
    EXIT_CANCELLED,
    EXIT_PAUSED,
    EXIT_USAGE,
    LEARNING_TABLES,
    DatabaseUrlOpt,
    OneLineErrors,
    check_database,
    check_request,
    exit_code,
    failure_code,
    resolve_database,
    resume_hint,
    say_error,
    usage_error,
)
from noema_graph.errors import FieldError, NoemaError
from noema_graph.noema.schema import DEFAULT_LEARNING_DB
from noema_graph.storage.urls import redacted

if TYPE_CHECKING:
    from datetime import timedelta

    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig

    from noema_graph.cli.live import RunView
    from noema_graph.cli.runs import Recipe
    from noema_graph.config import Protocol

app = typer.Typer(
    cls=OneLineErrors,
    add_completion=False,
    no_args_is_help=True,
    help="LangGraph agents that plan, act, reflect and report what they cost.",
)
console = Console(stderr=True, soft_wrap=True)
Show = Literal["text", "quiet", "json"]
"""What a run prints on stdout: the answer (and a status line), only the answer, the JSON."""

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help=(
            "local | openai:<model> | openai-compatible:<model>@<url>; default: NOEMA_MODEL, "
            "else NOEMA_BASE_URL, else OpenAI when OPENAI_API_KEY is set, else the embedded "
            "local model."
        ),
    ),
]
DbOpt = Annotated[Path, typer.Option("--db", help="SQLite file for checkpoints and memory.")]
RunDbOpt = Annotated[
    Path | None,
    typer.Option("--db", help=f"SQLite file for checkpoints and memory (default {DEFAULT_DB})."),
]
ThreadOpt = Annotated[str | None, typer.Option("--thread", "-t", help="Thread id (new if unset).")]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print only the output contract as JSON on stdout.")
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only the answer: no progress, no status.")
]
CompactOpt = Annotated[
    bool,
    typer.Option(
        "--compact",
        help="Write the SQLite file compact (about half the size; LangGraph's saver reads it "
        "only with noema's serializer; export --stock converts it). It stays compact.",
    ),
]


def _compact(where: Path | str, compact: bool) -> None:
    """Mark the SQLite file ``where`` compact when ``--compact`` was given (exit 2 on a URL)."""
    if not compact:
        return
    if isinstance(where, str):
        usage_error("--compact applies to SQLite files only", "drop --compact for PostgreSQL")
    from noema_graph.storage.sqlite.persistence import make_compact

    make_compact(where)


def _show(quiet: bool, as_json: bool) -> Show:
    if quiet and as_json:
        usage_error("--quiet and --json exclude each other", "pass one of them")
    return "json" if as_json else "quiet" if quiet else "text"


def _answer_text(output: Mapping[str, object]) -> str:
    result = output.get("result")
    if result is None:
        return ""
    return result if isinstance(result, str) else json.dumps(result, indent=2, default=str)


def _stop_code(output: Mapping[str, Any]) -> str:
    """Return why an unsuccessful run stopped: its error code, else its outcome."""
    error = output.get("error") or {}
    return str(error.get("code") or output.get("outcome") or "no output")


def _status_line(output: Mapping[str, Any]) -> str:
    meta = output["metadata"]
    status = "ok" if output["success"] else f"stopped: {_stop_code(output)}"
    cost = meta["estimated_cost_usd"]
    return (
        f"[bold]{status}[/bold] | {meta['iterations']} iterations | "
        f"{meta['token_usage']['total_tokens']} tokens | "
        f"cost {'unknown' if cost is None else f'${cost:.6f}'} | "
        f"{meta['execution_time_ms'] / 1000:.1f}s | model {meta['model']} | "
        f"confidence {output['reasoning']['confidence']}"
    )


def _print_output(output: Mapping[str, object], show: Show) -> None:
    """Print a run's output: the answer or the JSON on stdout, the status line on stderr."""
    if show == "json":
        sys.stdout.write(json.dumps(output, indent=2, default=str) + "\n")
        return
    if show == "quiet":
        sys.stdout.write(_answer_text(output) + "\n")
        return
    if not output:
        say_error("the run ended without an output", "inspect it with noema-graph inspect")
        return
    if sys.stdout.isatty():
        from noema_graph.cli.live import answer_panel

        Console().print(answer_panel(output))
    else:
        sys.stdout.write(_answer_text(output) + "\n")
    console.print(_status_line(output))


def _finish(
    output: Mapping[str, object], show: Show, *, thread: str | None = None, hint: str | None = None
) -> None:
    """Print ``output`` and exit with its code; a cancel prints ``hint`` (how to resume)."""
    code = exit_code(output)
    if thread is not None and show == "text":
        console.print(f"[dim]thread {thread}[/dim]")
    _print_output(output, show)
    if code == EXIT_CANCELLED:
        console.print("[yellow]cancelled[/yellow]" + (f"; continue with: {hint}" if hint else ""))
    if code:
        raise typer.Exit(code)


ModelFactory = Callable[[str | None], "BaseChatModel"]
"""Builds a run's chat model from its ``--model`` spec (None when the flag is not given)."""


@dataclass(frozen=True)
class CliOptions:
    """What a program embedding the CLI sets; passed as click's ``obj`` (see :func:`main`).

    ``model_factory``: builds the chat model of ``run``, ``ask`` and ``resume`` instead of
    ``--model`` and the environment (``NOEMA_MODEL``, ...); None keeps those.
    """

    model_factory: ModelFactory | None = None


def _models(ctx: typer.Context) -> ModelFactory:
    """Return what builds the run's chat model: the embedding program's factory, else ours."""
    options = ctx.find_object(CliOptions)
    return options.model_factory if options and options.model_factory else _model


def _model(spec: str | None) -> BaseChatModel:
    """Return the chat model; say so when the environment chose it (not --model)."""
    from noema_graph.cli.model import checked_model, choice_line

    line = choice_line(spec, os.environ)
    if line is not None:
        console.print(Text(line, style="dim"))
    return checked_model(spec, os.environ)


def _fail(exc: NoemaError) -> None:
    """Print ``exc`` in one line and exit with :func:`failure_code` (3 busy, 2 bad value)."""
    say_error(str(exc))
    raise typer.Exit(failure_code(exc))


def _view(show: Show) -> RunView:
    from noema_graph.cli.live import RunView, view_mode

    mode = view_mode(console, stdout_is_terminal=sys.stdout.isatty(), quiet=show != "text")
    return RunView(console, mode)


AgentArgs = Annotated[
    list[str],
    typer.Argument(
        help="[AGENT] REQUEST: a Noema agent (see `noema-graph agents`) and the request, "
        "or just a request for the general agent.",
        metavar="[AGENT] REQUEST",
    ),
]
DataOpt = Annotated[
    str | None,
    typer.Option(
        "--data",
        help="Learning store of the Noema agents (the sample is written if missing): a SQLite "
        "file or postgresql:// URL; default: NOEMA_LEARNING_DB, else the run's PostgreSQL "
        f"database (--database-url, NOEMA_DATABASE_URL), else {DEFAULT_LEARNING_DB}.",
    ),
]


YesOpt = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Approve every tool call and skip questions (for scripts)."),
]


@app.command()
def run(
    ctx: typer.Context,
    args: AgentArgs,
    model: ModelOpt = None,
    db: RunDbOpt = None,
    database_url: DatabaseUrlOpt = None,
    thread: ThreadOpt = None,
    user: Annotated[
        str | None, typer.Option("--user", help="User id (Noema agents: learner name or id).")
    ] = None,
    protocol: Annotated[str, typer.Option(help="auto | native | react")] = "auto",
    max_iterations: Annotated[
        int | None, typer.Option(min=1, help="Iteration limit (default 8; an agent's own).")
    ] = None,
    data: DataOpt = None,
    clarify: Annotated[
        bool, typer.Option("--clarify", help="Let the agent ask you questions (ask_user).")
    ] = False,
    confirm: Annotated[
        list[str] | None,
        typer.Option("--confirm", help="Ask before running this tool (repeatable)."),
    ] = None,
    confirm_writes: Annotated[
        bool, typer.Option("--confirm-writes", help="Ask before every non-idempotent call.")
    ] = False,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    compact: CompactOpt = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Write tools report what they would change; nothing is written "
            "(`noema-graph changes THREAD` lists the would-be changes).",
        ),
    ] = False,
) -> None:
    """Run an agent on REQUEST, showing its plan and tool calls live, then the answer.

    With AGENT (learning, calibration, governance...), that Noema agent runs over the
    learning store given by --data for the learner --user (default: ada). When the run
    pauses for you (a question, a call to approve), the answer is asked at the prompt.
    Ctrl-C once cancels the run (resume continues it), twice quits at once. Exit codes:
    0 success, 1 the run ended without success, 2 usage error, 3 paused, 130 cancelled.
    """
    from noema_graph.cli.runs import RUN_DATABASE, Recipe

    show = _show(quiet, as_json)
    agent, request = _agent_and_request(args)
    where = resolve_database(db, database_url)
    _compact(where, compact)
    learning = _learning_store(data, where) if agent is not None else DEFAULT_LEARNING_DB
    recipe = Recipe(
        agent=agent,
        model=model,
        data=RUN_DATABASE if isinstance(learning, str) and learning == where else str(learning),
        user=user or ("ada" if agent is not None else "cli"),
        protocol=_protocol(protocol),
        max_iterations=max_iterations,
        clarify=clarify,
        confirm=tuple(confirm or ()),
        confirm_writes=confirm_writes,
        cwd=str(Path.cwd()),
        dry_run=dry_run,
    )
    thread_id = thread or uuid4().hex[:12]
    _execute(recipe, where, thread_id, request, yes=yes, show=show, models=_models(ctx))


def _learning_store(data: str | None, where: Path | str) -> Path | str:
    """Return the Noema agents' learning store (see ``noema_graph.noema.location``), checked."""
    from noema_graph.noema.location import learning_location

    try:
        location = learning_location(data, env=os.environ, database=where)
    except FieldError as exc:  # an unsupported scheme: the message names the fix
        say_error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    if isinstance(location, Path):
        check_database(location, flag="--data", ours=LEARNING_TABLES)
    return location


def _shown(db: Path | str) -> str:
    """Return ``db`` for a message (a URL without its password)."""
    return str(db) if isinstance(db, Path) else redacted(db)


def _execute(
    recipe: Recipe,
    db: Path | str,
    thread_id: str,
    request: str | None,
    *,
    yes: bool,
    show: Show,
    models: ModelFactory,
    restart: bool = False,
) -> None:
    """Run (request given) or resume (None) ``thread_id``; print the output or the pause.

    ``models`` builds the chat model; ``restart``: the thread was cancelled; it continues
    from the step the cancel cut short.
    """
    from noema_graph.cli.errors import Paused
    from noema_graph.cli.runs import drive, open_graph, restart_point

    view = _view(show)
    hint = resume_hint(thread_id, db)
    started = False
    try:
        chat = models(recipe.model)
        with open_graph(recipe, chat, db, console) as (graph, user):
            inputs = None if request is None else {"messages": [("user", request)]}
            start = restart_point(graph, thread_id) if restart else None
            started = True
            output = drive(
                graph,
                inputs,
                thread=thread_id,
                user=user,
                recipe=recipe,
                yes=yes,
                console=console,
                view=view,
                abort=threading.Event(),
                hint=hint,
                start=start,
            )
    except Paused:  # a NoemaError, caught first: a pause is not a failure
        console.print(
            f"[yellow]paused[/yellow]: the run waits for your answer; continue with: {hint}"
        )
        raise typer.Exit(EXIT_PAUSED) from None
    except NoemaError as exc:
        _fail(exc)
        return
    except KeyboardInterrupt:  # Ctrl-C at a prompt, or while the model was loading
        more = f"; continue with: {hint}" if started else ""
        console.print(f"[yellow]cancelled[/yellow]{more}")
        raise typer.Exit(EXIT_CANCELLED) from None
    if recipe.agent is not None:
        output = _journal_notes(output, recipe, db, thread_id, show)
    _finish(output, show, thread=thread_id, hint=hint)


def _journal_notes(
    output: dict[str, object], recipe: Recipe, db: Path | str, thread: str, show: Show
) -> dict[str, object]:
    """Add the run's changes to the output contract; a dry run says what it would change."""
    from noema_graph.cli.runs import RUN_DATABASE
    from noema_graph.noema.location import store_location

    store = db if recipe.data == RUN_DATABASE else store_location(recipe.data)
    output = changes_cli.with_changes(output, store, thread)
    metadata = output.get("metadata")
    summary = metadata.get("changes") if isinstance(metadata, dict) else None
    ran_dry = isinstance(summary, dict) and bool(cast(dict[str, object], summary).get("dry_run"))
    unclear = not recipe.dry_run and ran_dry  # a change run dry: unclear
    if (recipe.dry_run or unclear) and show != "json":
        lines = changes_cli.dry_run_lines(store, thread)
        heading = (
            "[bold]not written[/bold]: the request did not clearly ask for a change; it would:"
            if unclear
            else "[bold]dry run[/bold]: nothing was written; this run would:"
        )
        console.print(heading)
        for line in lines or ["change nothing"]:
            console.print(f"  {line}", markup=False, highlight=False)
    return output


def _agent_and_request(args: list[str]) -> tuple[str | None, str]:
    from noema_graph.agents import default_registry

    names = default_registry().names()
    example = 'noema-graph run calibration "Is my confidence well calibrated?"'
    if len(args) == 1:
        if args[0] in names:
            usage_error(f"{args[0]!r} is an agent but no request follows", f"e.g. {example}")
        return None, check_request(args[0], 'noema-graph run "What is 17 times 23?"')
    if len(args) != 2:
        usage_error(
            f"expected [AGENT] REQUEST, got {len(args)} arguments",
            f'quote the request: noema-graph run [AGENT] "..."; e.g. {example}',
        )
    if args[0] not in names:
        usage_error(
            f"{args[0]!r} is not an agent",
            f"use one of {', '.join(names)} (see noema-graph agents), or quote the whole "
            "request for the general agent",
        )
    return args[0], check_request(args[1], example)


@app.command("demo-data")
def demo_data(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help=f"New SQLite file for the learning store ({DEFAULT_LEARNING_DB})."
        ),
    ] = None,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="Write into this database instead: postgresql://USER:PASSWORD@HOST:PORT/DB "
            "(one without learning data) or sqlite:///FILE; default: NOEMA_LEARNING_DB, else "
            "NOEMA_DATABASE_URL when it is PostgreSQL, else --db.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Simulation seed (same seed, same data).")] = 7,
) -> None:
    """Write the deterministic sample learning store (decks, cards, learners, reviews)."""
    from noema_graph.noema import write_demo_data
    from noema_graph.noema.location import learning_location, shown

    if db is not None and database_url is not None:
        usage_error(
            "--db and --database-url exclude each other",
            "pass only one (--db FILE is the same as --database-url sqlite:///FILE)",
        )
    try:
        target = db or learning_location(database_url, env=os.environ)
        summary = write_demo_data(target, seed=seed)
    except NoemaError as exc:
        _fail(exc)
        return
    console.print(
        f"wrote {shown(target)}: {len(summary.decks)} decks, {summary.cards} cards, "
        f"{summary.reviews} reviews, learners {', '.join(summary.users)}, "
        f"{sum(map(len, summary.bad_cards.values()))} deliberately bad cards "
        f"({summary.seconds:.1f}s)"
    )


@app.command()
def agents() -> None:
    """List the Noema agents: name, tools, description."""
    from noema_graph.agents import default_registry

    for definition in default_registry().get_all():
        tools = ", ".join([*definition.tools, *(f"consult_{s}" for s in definition.subagents)])
        sys.stdout.write(f"{definition.name:<20} {definition.description}\n")
        sys.stdout.write(f"{'':<20} tools: {tools}\n")


def _protocol(value: str) -> Protocol:
    if value not in ("auto", "native", "react"):
        usage_error(f"--protocol {value!r} is not a protocol", "use auto, native or react")
    return value


def _stream(graph: Any, inputs: Any, thread: str, user: str, view: RunView) -> dict[str, object]:
    """Stream a run without pauses (ask) into ``view``; Ctrl-C cancels it as in ``run``."""
    from noema_graph.cli.cancel import ctrl_c_cancels
    from noema_graph.cli.live import STREAM_MODES, events_of
    from noema_graph.cli.runs import CANCELLING
    from noema_graph.context import RunContext

    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    abort = threading.Event()
    context = RunContext(user_id=user, abort=abort)
    with (
        ctrl_c_cancels(abort, on_cancel=lambda: view.note(CANCELLING), on_exit=lambda: None),
        view.segment(),
    ):
        for mode, chunk in graph.stream(inputs, config, stream_mode=STREAM_MODES, context=context):
            for event in events_of(mode, chunk):
                view.feed(event)
    return graph.get_state(config).values.get("output", {})


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question.")],
    model: ModelOpt = None,
    db: DbOpt = DEFAULT_DB,
    user: Annotated[str, typer.Option("--user", help="User id for memory.")] = "cli",
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    compact: CompactOpt = False,
) -> None:
    """Answer QUESTION read-only: memory recall and the model, no tools, no writes."""
    show = _show(quiet, as_json)
    question = check_request(question, 'noema-graph ask "What did I study yesterday?"')
    check_database(db)
    _compact(db, compact)
    from noema_graph.graphs import build_ask_graph
    from noema_graph.storage.sqlite.persistence import sqlite_checkpointer, sqlite_store

    try:
        chat = _models(ctx)(model)
        with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
            graph = build_ask_graph(model=chat, checkpointer=saver, store=store)
            output = _stream(
                graph, {"messages": [("user", question)]}, uuid4().hex[:12], user, _view(show)
            )
    except NoemaError as exc:
        _fail(exc)
        return
    _finish(output, show)


@app.command()
def resume(
    ctx: typer.Context,
    thread: Annotated[str, typer.Argument(help="Thread id of an interrupted or paused run.")],
    model: ModelOpt = None,
    db: RunDbOpt = None,
    database_url: DatabaseUrlOpt = None,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    compact: CompactOpt = False,
) -> None:
    """Resume a run from its last checkpoint: after a crash, Ctrl-C, or a pause for you.

    The run's agent, learner and approval flags are read from the thread's checkpoints;
    --model replaces the model it ran with. A cancelled run continues from the step the
    cancel cut short. A finished thread is not run again: its result is printed (exit 0,
    or 1 if that run did not succeed).
    """
    from noema_graph.cli.runs import Recipe, saved_recipe, thread_status

    show = _show(quiet, as_json)
    where = resolve_database(db, database_url, must_exist=True)
    _compact(where, compact)
    try:
        status, output = thread_status(where, thread)
    except NoemaError as exc:
        _fail(exc)
        return
    if status == "unknown":
        listing = f"noema-graph threads --db {where}" if isinstance(where, Path) else None
        usage_error(
            f"no thread {thread!r} in {_shown(where)}",
            f"list them with {listing}" if listing else "check the thread id the run printed",
        )
    if status == "finished":
        ended = "successfully" if output.get("success") else f"with {_stop_code(output)}"
        console.print(
            f"thread {thread} already finished {ended}; nothing to resume "
            f"(start a new run, or continue the conversation with --thread {thread})"
        )
        _finish(output, show)
        return
    recipe = saved_recipe(where, thread) or Recipe(cwd=str(Path.cwd()))  # a run from Python
    if model is not None:
        recipe = recipe.model_copy(update={"model": model})
    restart = status in ("cancelled", "running")  # a run may stop while it is being cancelled
    _execute(recipe, where, thread, None, yes=yes, show=show, models=_models(ctx), restart=restart)


@app.command()
def prune(
    keep_last: Annotated[
        int | None,
        typer.Option(help="Checkpoints kept per thread (default 1 without --older-than)."),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option(help="Also delete checkpoints older than this age: 7d, 12h, 30m, 3600."),
    ] = None,
    db: RunDbOpt = None,
    database_url: DatabaseUrlOpt = None,
) -> None:
    """Delete old checkpoints and threads (with their events and ledger) and VACUUM the file.

    On PostgreSQL (--database-url, NOEMA_DATABASE_URL) whole threads go: those none of
    whose checkpoints is within the limits. Older checkpoints of a thread that keeps newer
    ones stay there (they hold the history its newer ones replay); they are counted.
    """
    from noema_graph.storage.sqlite.retention import parse_age

    where = resolve_database(db, database_url, must_exist=True)
    try:
        age = None if older_than is None else parse_age(older_than)
        keep = 1 if keep_last is None and age is None else keep_last
        if isinstance(where, str):
            _prune_postgres(where, keep_last=keep, older_than=age)
            return
        from noema_graph.storage.sqlite.persistence import prune as prune_checkpoints

        removed = prune_checkpoints(where, keep_last=keep, older_than=age)
    except NoemaError as exc:
        _fail(exc)
        return
    console.print(f"removed {removed} checkpoints from {where}")


def _prune_postgres(url: str, *, keep_last: int | None, older_than: timedelta | None) -> None:
    """Prune the PostgreSQL database at ``url``; print what went and what the limits left."""
    from noema_graph.storage.postgres.retention import prune_postgres

    pruned = prune_postgres(url, keep_last=keep_last, older_than=older_than)
    console.print(
        f"removed {pruned.removed_checkpoints} checkpoints "
        f"({len(pruned.dropped_threads)} threads) from {_shown(url)}"
    )
    if pruned.kept_checkpoints:
        console.print(
            f"kept {pruned.kept_checkpoints} older checkpoints of {pruned.kept_threads} threads "
            "that keep newer ones: on PostgreSQL only whole threads are pruned (use "
            "--older-than)"
        )


mcp_app = typer.Typer(no_args_is_help=True, help="Model Context Protocol server.")
app.add_typer(mcp_app, name="mcp")
app.add_typer(cli_db.app, name="db")


@mcp_app.command("serve")
def mcp_serve(
    transport: Annotated[str, typer.Option(help="stdio | http")] = "stdio",
    port: Annotated[
        int, typer.Option(min=1, max=65535, help="Port for http (bound to 127.0.0.1).")
    ] = 8765,
    working_directory: Annotated[
        Path, typer.Option("--working-directory", help="Sandbox root of the file tools.")
    ] = Path("."),
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Also serve the learning domain tools over this store; their writes are "
            "journaled, one thread (mcp-...) per MCP session, named in each write's result.",
        ),
    ] = None,
) -> None:
    """Serve noema's tools over MCP (stdio, or streamable HTTP on 127.0.0.1)."""
    from noema_graph.agents.mcp_server import serve
    from noema_graph.config import AgentConfig

    if transport not in ("stdio", "http"):
        usage_error(f"--transport {transport!r} is not a transport", "use stdio or http")
    config = AgentConfig(working_directory=working_directory.resolve())
    serve("stdio" if transport == "stdio" else "http", port=port, config=config, learning_db=data)


app.command("stats")(observability_cli.stats)
app.command("events")(observability_cli.events)
app.command("threads")(inspect_cli.threads)
app.command("history")(inspect_cli.history)
app.command("inspect")(inspect_cli.inspect)
app.command("changes")(changes_cli.changes)
app.command("undo")(changes_cli.undo)
doctor_cli.register(app)
export_cli.register(app)


@app.command(
    "eval",
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def eval_(ctx: typer.Context) -> None:
    """Run an agent over a dataset and score it: eval DATASET --agent NAME (see eval --help)."""
    from noema_graph.cli.eval import eval_app

    eval_app(ctx.args, prog_name="noema-graph eval", obj=ctx.find_object(CliOptions))


@app.command(
    "eval-diff",
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def eval_diff(ctx: typer.Context) -> None:
    """Compare two eval results files: eval-diff OLD.json NEW.json [--fail-on-regression]."""
    from noema_graph.cli.eval import eval_diff_app

    eval_diff_app(ctx.args, prog_name="noema-graph eval-diff")


@app.callback()
def _logging(
    log_json: Annotated[
        bool,
        typer.Option(
            "--log-json",
            help="Structured JSON logs on stderr (INFO); without it only errors are logged "
            "(the run's view shows its warnings).",
        ),
    ] = False,
) -> None:
    """LangGraph agents that plan, act, reflect and report what they cost."""
    observability_cli.configure_logging(json=log_json, level=None if log_json else logging.ERROR)


def main(argv: Sequence[str] | None = None, *, model_factory: ModelFactory | None = None) -> None:
    """Run the CLI on ``argv`` (default: the command line) and exit with its status.

    ``model_factory(spec)`` builds the chat model of ``run``, ``ask`` and ``resume`` (see
    :class:`CliOptions`). A cancelled run leaves at once (its abandoned call is not waited
    for).
    """
    from noema_graph.cli.cancel import hard_exit

    args = None if argv is None else list(argv)
    try:
        app(args=args, prog_name="noema-graph", obj=CliOptions(model_factory=model_factory))
    except SystemExit as exc:
        if exc.code == EXIT_CANCELLED:
            hard_exit(EXIT_CANCELLED)
        raise
