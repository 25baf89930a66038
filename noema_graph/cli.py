"""The ``noema-graph`` command line: run, ask, resume, prune.

Rich output lives here and nowhere else in the package.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any
from uuid import uuid4

import typer
from rich.console import Console

from noema_graph.config import AgentConfig, Protocol
from noema_graph.context import RunContext
from noema_graph.errors import NoemaError
from noema_graph.graphs import build_agent_graph, build_ask_graph
from noema_graph.persistence import prune as prune_checkpoints
from noema_graph.persistence import sqlite_checkpointer, sqlite_store

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


@app.command()
def run(
    request: Annotated[str, typer.Argument(help="What the agent should do.")],
    model: ModelOpt = None,
    db: DbOpt = DEFAULT_DB,
    thread: ThreadOpt = None,
    user: Annotated[str, typer.Option("--user", help="User id for memory.")] = "cli",
    protocol: Annotated[str, typer.Option(help="auto | native | react")] = "auto",
    max_iterations: Annotated[int, typer.Option(help="Iteration limit.")] = 8,
    as_json: JsonOpt = False,
) -> None:
    """Run the agent graph on REQUEST and print the result, cost and confidence."""
    thread_id = thread or uuid4().hex[:12]
    try:
        config = AgentConfig(
            model=model,
            max_iterations=max_iterations,
            protocol=_protocol(protocol),
            enabled_toolkits=(),
            working_directory=Path.cwd(),
        )
        chat = _model(model)
        with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
            graph = build_agent_graph(config, model=chat, checkpointer=saver, store=store)
            output = _stream(graph, {"messages": [("user", request)]}, thread_id, user)
    except NoemaError as exc:
        _fail(exc)
        return
    console.print(f"[dim]thread {thread_id} (resume: noema-graph resume {thread_id})[/dim]")
    _print_output(output, as_json)


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
    thread: Annotated[str, typer.Argument(help="Thread id of an interrupted run.")],
    model: ModelOpt = None,
    db: DbOpt = DEFAULT_DB,
    as_json: JsonOpt = False,
) -> None:
    """Resume an interrupted run from its last checkpoint."""
    try:
        chat = _model(model)
        with sqlite_checkpointer(db) as saver:
            graph = build_agent_graph(
                AgentConfig(enabled_toolkits=()), model=chat, checkpointer=saver
            )
            if not graph.get_state({"configurable": {"thread_id": thread}}).values:
                console.print(f"[red]error:[/red] no thread {thread!r} in {db}")
                raise typer.Exit(2)
            output = _stream(graph, None, thread, "cli")
    except NoemaError as exc:
        _fail(exc)
        return
    _print_output(output, as_json)


@app.command()
def prune(
    keep_last: Annotated[int, typer.Option(help="Checkpoints kept per thread.")] = 1,
    db: DbOpt = DEFAULT_DB,
) -> None:
    """Delete old checkpoints (keeping the newest per thread) and VACUUM the file."""
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
) -> None:
    """Serve noema's tools over MCP (stdio, or streamable HTTP on 127.0.0.1)."""
    from noema_graph.tools.mcp_server import serve

    if transport not in ("stdio", "http"):
        raise typer.BadParameter(f"{transport!r} is not stdio or http", param_hint="--transport")
    config = AgentConfig(working_directory=working_directory.resolve())
    serve("stdio" if transport == "stdio" else "http", port=port, config=config)


def main() -> None:  # pragma: no cover - console entry point
    """Run the CLI with warnings from libraries kept quiet."""
    logging.basicConfig(level=logging.WARNING)
    app()
