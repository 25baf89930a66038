"""The ``noema-graph`` command line: run, ask, resume, prune, demo-data, agents, mcp.

Rich output lives here and nowhere else in the package. Graphs, models and storage are
imported inside the commands that use them, so ``noema-graph --help`` starts in a fraction
of a second (``tests/test_imports.py`` keeps it that way).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from uuid import uuid4

import typer
from rich.console import Console

from noema_graph import inspect_cli
from noema_graph.errors import NoemaError
from noema_graph.noema.schema import DEFAULT_LEARNING_DB
from noema_graph.observability import cli as observability_cli

if TYPE_CHECKING:
    from noema_graph.cli_runs import Recipe
    from noema_graph.config import Protocol

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="LangGraph agents that plan, act, reflect and report what they cost.",
)
console = Console(stderr=True)
DEFAULT_DB = Path("noema.sqlite")

ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help=(
            "local | openai:<model> | openai-compatible:<model>@<url>; default: NOEMA_MODEL, "
            "else OpenAI when OPENAI_API_KEY is set, else the embedded local model."
        ),
    ),
]
DbOpt = Annotated[Path, typer.Option("--db", help="SQLite file for checkpoints and memory.")]
ThreadOpt = Annotated[str | None, typer.Option("--thread", "-t", help="Thread id (new if unset).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the output contract as JSON.")]


def _render_event(event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind == "plan_created":
        console.print(f"[bold]plan[/bold] {event['goal']}")
        for i, step in enumerate(event["steps"], 1):
            console.print(f"  {i}. {step}")
    elif kind == "tool_call_start":
        console.print(f"[cyan]tool[/cyan] {event['tool']}({json.dumps(event['input'])[:200]})")
    elif kind == "tool_call_end":
        console.print(
            f"  -> [{'green' if event['status'] == 'ok' else 'red'}]{event['status']}"
            f"[/] {event['output'][:200]}"
        )
    elif kind == "thinking":
        console.print(f"[dim]thinking: {event['text'][:300]}[/dim]")
    elif kind in ("reflection", "plan_revised", "warning", "error", "compaction"):
        console.print(f"[yellow]{kind}[/yellow] {json.dumps(event)[:300]}")


def _print_output(output: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(output, indent=2, default=str) + "\n")
        return
    meta = output["metadata"]
    result = output["result"]
    sys.stdout.write((result if isinstance(result, str) else json.dumps(result, indent=2)) + "\n")
    status = "ok" if output["success"] else f"stopped: {output['error']['code']}"
    cost = meta["estimated_cost_usd"]
    console.print(
        f"[bold]{status}[/bold] | {meta['iterations']} iterations | "
        f"{meta['token_usage']['total_tokens']} tokens | "
        f"cost {'unknown' if cost is None else f'${cost:.6f}'} | "
        f"{meta['execution_time_ms'] / 1000:.1f}s | model {meta['model']} | "
        f"confidence {output['reasoning']['confidence']}"
    )


def _stream(graph: Any, inputs: Any, thread: str, user: str) -> dict[str, Any]:
    from noema_graph.context import RunContext

    config = {"configurable": {"thread_id": thread}}
    for event in graph.stream(
        inputs, config, stream_mode="custom", context=RunContext(user_id=user)
    ):
        _render_event(event)
    return graph.get_state(config).values.get("output", {})


def _model(spec: str | None) -> Any:
    from noema_graph.models.factory import make_model

    return make_model(spec)


def _fail(exc: NoemaError) -> None:
    console.print(f"[red]error:[/red] {exc}")
    raise typer.Exit(2)


AgentArgs = Annotated[
    list[str],
    typer.Argument(
        help="[AGENT] REQUEST: a Noema agent (see `noema-graph agents`) and the request, "
        "or just a request for the general agent.",
        metavar="[AGENT] REQUEST",
    ),
]
DataOpt = Annotated[
    Path,
    typer.Option(
        "--data", help="Learning store of the Noema agents (the sample is written if missing)."
    ),
]


YesOpt = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Approve every tool call and skip questions (for scripts)."),
]


@app.command()
def run(
    args: AgentArgs,
    model: ModelOpt = None,
    db: DbOpt = DEFAULT_DB,
    thread: ThreadOpt = None,
    user: Annotated[
        str | None, typer.Option("--user", help="User id (Noema agents: learner name or id).")
    ] = None,
    protocol: Annotated[str, typer.Option(help="auto | native | react")] = "auto",
    max_iterations: Annotated[
        int | None, typer.Option(help="Iteration limit (default 8; an agent's own).")
    ] = None,
    data: DataOpt = DEFAULT_LEARNING_DB,
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
) -> None:
    """Run an agent on REQUEST and print the result, cost and confidence.

    With AGENT (learning, calibration, governance...), that Noema agent runs over the
    learning store given by --data for the learner --user (default: ada). When the run
    pauses for you (a question, a call to approve), the answer is asked at the prompt.
    """
    from noema_graph.cli_runs import Recipe

    agent, request = _agent_and_request(args)
    recipe = Recipe(
        agent=agent,
        model=model,
        data=str(data),
        user=user or ("ada" if agent is not None else "cli"),
        protocol=_protocol(protocol),
        max_iterations=max_iterations,
        clarify=clarify,
        confirm=tuple(confirm or ()),
        confirm_writes=confirm_writes,
        cwd=str(Path.cwd()),
    )
    _execute(recipe, db, thread or uuid4().hex[:12], request, yes=yes, as_json=as_json)


def _execute(
    recipe: Recipe, db: Path, thread_id: str, request: str | None, *, yes: bool, as_json: bool
) -> None:
    """Run (request given) or resume (None) ``thread_id``; print the output or the pause."""
    from noema_graph.cli_runs import Paused, drive, open_graph

    try:
        chat = _model(recipe.model)
        with open_graph(recipe, chat, db, console) as (graph, user, phrase):
            inputs = None if request is None else {"messages": [("user", phrase(request))]}
            output = drive(
                graph,
                inputs,
                thread=thread_id,
                user=user,
                recipe=recipe,
                yes=yes,
                console=console,
                render=_render_event,
            )
    except NoemaError as exc:
        _fail(exc)
        return
    except Paused:
        console.print(
            f"[yellow]paused[/yellow]: the run waits for your answer; "
            f"continue with: noema-graph resume {thread_id}"
        )
        raise typer.Exit(3) from None
    console.print(f"[dim]thread {thread_id} (resume: noema-graph resume {thread_id})[/dim]")
    _print_output(output, as_json)


def _agent_and_request(args: list[str]) -> tuple[str | None, str]:
    from noema_graph.agents import default_registry

    if len(args) == 1:
        return None, args[0]
    names = default_registry().names()
    if len(args) != 2:
        raise typer.BadParameter(
            f"expected [AGENT] REQUEST, got {len(args)} arguments; quote the request",
            param_hint="ARGS",
        )
    if args[0] not in names:
        raise typer.BadParameter(
            f"{args[0]!r} is not an agent; use one of {', '.join(names)}", param_hint="AGENT"
        )
    return args[0], args[1]


@app.command("demo-data")
def demo_data(
    db: Annotated[
        Path, typer.Option("--db", help="New SQLite file for the learning store.")
    ] = DEFAULT_LEARNING_DB,
    seed: Annotated[int, typer.Option(help="Simulation seed (same seed, same data).")] = 7,
) -> None:
    """Write the deterministic sample learning store (decks, cards, learners, reviews)."""
    from noema_graph.noema import write_demo_data

    try:
        summary = write_demo_data(db, seed=seed)
    except NoemaError as exc:
        _fail(exc)
        return
    console.print(
        f"wrote {db}: {len(summary.decks)} decks, {summary.cards} cards, "
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
        raise typer.BadParameter(
            f"{value!r} is not one of auto, native, react", param_hint="--protocol"
        )
    return value  # type: ignore[return-value]


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    model: ModelOpt = None,
    db: DbOpt = DEFAULT_DB,
    user: Annotated[str, typer.Option("--user", help="User id for memory.")] = "cli",
    as_json: JsonOpt = False,
) -> None:
    """Answer QUESTION read-only: memory recall and the model, no tools, no writes."""
    from noema_graph.graphs import build_ask_graph
    from noema_graph.persistence import sqlite_checkpointer, sqlite_store

    try:
        chat = _model(model)
        with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
            graph = build_ask_graph(model=chat, checkpointer=saver, store=store)
            output = _stream(graph, {"messages": [("user", question)]}, uuid4().hex[:12], user)
    except NoemaError as exc:
        _fail(exc)
        return
    _print_output(output, as_json)


@app.command()
def resume(
    thread: Annotated[str, typer.Argument(help="Thread id of an interrupted or paused run.")],
    model: ModelOpt = None,
    db: DbOpt = DEFAULT_DB,
    yes: YesOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Resume a run from its last checkpoint: after a crash, or when it paused for you.

    The run's agent, learner and approval flags are read from the thread's checkpoints;
    --model replaces the model it ran with.
    """
    from noema_graph.cli_runs import Recipe, saved_recipe
    from noema_graph.persistence import sqlite_checkpointer

    if not db.exists():
        console.print(f"[red]error:[/red] {db} does not exist")
        raise typer.Exit(2)
    recipe = saved_recipe(db, thread)
    with sqlite_checkpointer(db) as saver:
        known = saver.get_tuple({"configurable": {"thread_id": thread}}) is not None
    if not known:
        console.print(f"[red]error:[/red] no thread {thread!r} in {db}")
        raise typer.Exit(2)
    recipe = recipe or Recipe(cwd=str(Path.cwd()))  # a thread started from Python
    if model is not None:
        recipe = recipe.model_copy(update={"model": model})
    _execute(recipe, db, thread, None, yes=yes, as_json=as_json)


@app.command()
def prune(
    keep_last: Annotated[int, typer.Option(help="Checkpoints kept per thread.")] = 1,
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Delete old checkpoints (keeping the newest per thread) and VACUUM the file."""
    from noema_graph.persistence import prune as prune_checkpoints

    if not db.exists():
        console.print(f"[red]error:[/red] {db} does not exist")
        raise typer.Exit(2)
    try:
        removed = prune_checkpoints(db, keep_last=keep_last)
    except NoemaError as exc:
        _fail(exc)
        return
    console.print(f"removed {removed} checkpoints from {db}")


mcp_app = typer.Typer(no_args_is_help=True, help="Model Context Protocol server.")
app.add_typer(mcp_app, name="mcp")


@mcp_app.command("serve")
def mcp_serve(
    transport: Annotated[str, typer.Option(help="stdio | http")] = "stdio",
    port: Annotated[int, typer.Option(help="Port for http (bound to 127.0.0.1).")] = 8765,
    working_directory: Annotated[
        Path, typer.Option("--working-directory", help="Sandbox root of the file tools.")
    ] = Path("."),
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Also serve the learning domain tools over this store."),
    ] = None,
) -> None:
    """Serve noema's tools over MCP (stdio, or streamable HTTP on 127.0.0.1)."""
    from noema_graph.config import AgentConfig
    from noema_graph.tools.mcp_server import serve

    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"{transport!r} is not stdio or http", param_hint="--transport")
    config = AgentConfig(working_directory=working_directory.resolve())
    serve("stdio" if transport == "stdio" else "http", port=port, config=config, learning_db=data)


app.command("stats")(observability_cli.stats)
app.command("events")(observability_cli.events)
app.command("threads")(inspect_cli.threads)
app.command("history")(inspect_cli.history)
app.command("inspect")(inspect_cli.inspect)


@app.command(
    "eval",
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def eval_(ctx: typer.Context) -> None:
    """Run an agent over a dataset and score it: eval DATASET --agent NAME (see eval --help)."""
    from noema_graph.evals.cli import eval_app

    eval_app(ctx.args, prog_name="noema-graph eval")


@app.callback()
def _logging(
    log_json: Annotated[
        bool, typer.Option("--log-json", help="Structured JSON logs on stderr (INFO).")
    ] = False,
) -> None:
    """LangGraph agents that plan, act, reflect and report what they cost."""
    observability_cli.configure_logging(json=log_json)


def main() -> None:  # pragma: no cover - console entry point
    """Run the CLI."""
    app()
