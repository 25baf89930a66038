"""What ``noema-graph run`` and ``resume`` share: the run recipe, the graph, the pauses.

A run's recipe (agent, model, learner, approval flags) is stored in the metadata of every
checkpoint of its thread, so ``noema-graph resume THREAD`` rebuilds the same graph in a new
process. When the graph pauses for the user, the CLI asks at the prompt; ``--yes`` approves
every call and leaves questions to the model's best assumption. When stdin has no answer,
the run stays paused in the checkpoint and :class:`Paused` is raised.

Ctrl-C while the graph streams cancels the run (:mod:`noema_graph.cli.cancel`); resume finds
where a thread stands with :func:`thread_status` and continues a cancelled one from
:func:`restart_point`, the checkpoint before the step the cancel cut short.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Generator, Mapping
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path
from typing import Any, Literal, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict
from rich.console import Console

from noema_graph.cli.cancel import ctrl_c_cancels
from noema_graph.cli.errors import Paused
from noema_graph.cli.live import STREAM_MODES, RunView, events_of
from noema_graph.config import AgentConfig, Protocol
from noema_graph.context import RunContext
from noema_graph.graphs import build_agent_graph
from noema_graph.hitl import HumanRequest, check_answer, pending
from noema_graph.nodes.tool_node import CUT_BY_CANCEL, NOT_RUN_CANCELLED
from noema_graph.state.human import ClarifyRequest, ConfirmRequest
from noema_graph.storage.backends import open_backend

RECIPE_KEY = "noema_cli_recipe"
Database = Path | str
"""Where a run's checkpoints and memory live: a SQLite file, or a database URL."""
CANCELLING = "cancelling: the call in progress stops and the run finalizes (Ctrl-C again quits now)"


RUN_DATABASE = "@database"
"""``Recipe.data`` for a learning store in the run's own (PostgreSQL) database."""


class Recipe(BaseModel):
    """How a CLI run was started; enough to rebuild its graph in another process."""

    model_config = ConfigDict(frozen=True)

    agent: str | None = None
    model: str | None = None
    data: str = "noema-learning.sqlite"
    """The learning store: a path or URL, or :data:`RUN_DATABASE` (no password in metadata)."""
    user: str = "cli"
    protocol: Protocol = "auto"
    max_iterations: int | None = None
    clarify: bool = False
    confirm: tuple[str, ...] = ()
    confirm_writes: bool = False
    cwd: str = "."
    dry_run: bool = False
    """Write tools report what they would change; nothing is written (resume keeps it)."""

    def human_overrides(self) -> dict[str, object]:
        """Return the AgentConfig fields the approval flags set (only those given)."""
        flags: dict[str, object] = {
            "clarify": self.clarify or None,
            "confirm_tools": self.confirm or None,
            "confirm_non_idempotent": self.confirm_writes or None,
        }
        return {k: v for k, v in flags.items() if v is not None}


def saved_recipe(db: Database, thread: str) -> Recipe | None:
    """Return the recipe stored with ``thread``'s latest checkpoint, if it has one."""
    with open_backend(db) as backend:
        found = backend.checkpointer.get_tuple({"configurable": {"thread_id": thread}})
    if found is None or RECIPE_KEY not in (found.metadata or {}):
        return None
    metadata = cast("Mapping[str, object]", found.metadata)  # RECIPE_KEY: an extra key
    return Recipe.model_validate_json(str(metadata[RECIPE_KEY]))


@contextmanager
def open_graph(
    recipe: Recipe, chat: BaseChatModel, db: Database, console: Console
) -> Generator[tuple[Any, str]]:
    """Yield (graph, learner name) for ``recipe`` over ``db``.

    The learner travels in the run's context (the caller's ``RunContext(user_id=...)``),
    never in the request's text.

    The learning store of the Noema agents is ``recipe.data``: a SQLite file or a database
    URL, or ``db`` itself (:data:`RUN_DATABASE`). On PostgreSQL with pgvector the memory is
    embedded and ranked by the database (the same offline embedder as on SQLite).
    """
    from noema_graph.memory.embedders import default_embedder

    with open_backend(db, embedder=default_embedder()) as backend:
        saver, store = backend.checkpointer, backend.store
        if recipe.agent is None:
            config = AgentConfig(
                model=recipe.model,
                max_iterations=recipe.max_iterations or 8,
                protocol=recipe.protocol,
                enabled_toolkits=(),
                working_directory=Path(recipe.cwd),
                **recipe.human_overrides(),
            )
            graph = build_agent_graph(config, model=chat, checkpointer=saver, store=store)
            yield graph, recipe.user
            return
        from noema_graph.agents import ensure_demo_data, get_graph, resolve_learner
        from noema_graph.noema.location import shown, store_location

        data = db if recipe.data == RUN_DATABASE else store_location(recipe.data)
        written = ensure_demo_data(data)
        if written is not None:
            console.print(
                f"[dim]{shown(data)} had no learning data: wrote the sample "
                f"({written.cards} cards, {written.reviews} reviews, "
                f"learners {', '.join(written.users)})[/dim]"
            )
        learner = resolve_learner(data, recipe.user)
        overrides: dict[str, object] = {"protocol": recipe.protocol, **recipe.human_overrides()}
        if recipe.max_iterations is not None:
            overrides["max_iterations"] = recipe.max_iterations
        graph = get_graph(
            recipe.agent, model=chat, checkpointer=saver, store=store, db=data, overrides=overrides
        )
        yield graph, learner.name


def _read(console: Console, prompt: str) -> str:
    console.print(prompt, end="")
    try:
        return input()
    except EOFError:
        raise Paused from None


def _confirm_call(console: Console, call: Any) -> dict[str, object]:
    console.print(
        f"[bold yellow]approve?[/bold yellow] {call.name}({json.dumps(call.args)}) "
        f"[dim]({call.reason})[/dim]"
    )
    while True:
        choice = _read(console, "  [a]pprove, [r]eject or [e]dit: ").strip().lower()[:1]
        if choice == "a":
            return {"action": "approve"}
        if choice == "r":
            return {"action": "reject", "reason": _read(console, "  reason (optional): ")}
        if choice == "e":
            raw = _read(console, "  new arguments as JSON: ")
            try:
                args = json.loads(raw)
            except json.JSONDecodeError as exc:
                console.print(f"  [red]not JSON: {exc}[/red]")
                continue
            if isinstance(args, dict):
                return {"action": "edit", "args": args}
            console.print("  [red]the arguments must be a JSON object[/red]")


def answer(request: HumanRequest, console: Console, *, yes: bool) -> object:
    """Return the user's answer to ``request``, read at the prompt (or automatic with yes)."""
    if isinstance(request, ClarifyRequest):
        console.print(f"[bold cyan]question[/bold cyan] {request.question}")
        return "" if yes else _read(console, "  your answer: ")
    assert isinstance(request, ConfirmRequest)
    if request.error:
        console.print(f"[red]{request.error}[/red]")
    if yes:
        for call in request.calls:
            console.print(f"[dim]approved (--yes): {call.name}({json.dumps(call.args)})[/dim]")
        return "approve"
    return {call.id: _confirm_call(console, call) for call in request.calls}


def drive(
    graph: Any,
    inputs: Any,
    *,
    thread: str,
    user: str,
    recipe: Recipe,
    yes: bool,
    console: Console,
    view: RunView,
    abort: threading.Event,
    hint: str,
    start: str | None = None,
) -> dict[str, object]:
    """Stream the run, answer every pause at the prompt, and return the output contract.

    ``start`` is the checkpoint id to continue from (a cancelled run goes back to the step it
    cut short); None continues from the thread's latest checkpoint. A first Ctrl-C while
    the graph streams sets ``abort`` (the run finalizes as cancelled), a second one exits
    at once, printing ``hint`` (the command that resumes the thread).
    """
    config: RunnableConfig = {
        "configurable": {"thread_id": thread},
        "metadata": {RECIPE_KEY: recipe.model_dump_json()},
    }
    first: RunnableConfig = config
    if start is not None:
        first = {**config, "configurable": {"thread_id": thread, "checkpoint_id": start}}
    context = RunContext(user_id=user, abort=abort, dry_run=recipe.dry_run)
    while True:
        with (
            ctrl_c_cancels(
                abort,
                on_cancel=lambda: view.note(CANCELLING),
                on_exit=lambda: _raw_stderr(f"\nquit; continue with: {hint}\n"),
            ),
            view.segment(),
        ):
            stream = graph.stream(inputs, first, stream_mode=STREAM_MODES, context=context)
            for mode, chunk in stream:
                for event in events_of(mode, chunk):
                    view.feed(event)
        first = config
        open_requests = [] if abort.is_set() else pending(graph, config)
        if not open_requests:
            return graph.get_state(config).values.get("output", {})
        inputs = Command(
            resume={
                p.interrupt_id: check_answer(p.request, answer(p.request, console, yes=yes))
                for p in open_requests
            }
        )


def _raw_stderr(text: str) -> None:
    """Write to fd 2 without Python's buffers (the process ends right after it)."""
    os.write(2, text.encode())


def _checkpoint_id(config: RunnableConfig) -> str:
    return str(config.get("configurable", {})["checkpoint_id"])


CANCELLED_CALLS = (NOT_RUN_CANCELLED, CUT_BY_CANCEL)


def _made_by_a_cancel(snapshot: Any) -> bool:
    """Return True when a pending task of ``snapshot`` saved what a cancel made.

    That is a call's cancelled observation, or finalize's cancelled output: the process
    ended (a second Ctrl-C, a kill) before the checkpoint that would have closed the step.
    """
    for task in snapshot.tasks:
        result: Mapping[str, Any] = task.result or {}
        output = result.get("output")
        if isinstance(output, Mapping) and (output.get("error") or {}).get("code") == "cancelled":
            return True
        messages = result.get("messages") or []
        if any(isinstance(m, ToolMessage) and m.content in CANCELLED_CALLS for m in messages):
            return True
    return False


def _step_cancelled(values: Mapping[str, Any]) -> bool:
    """Return True when the step that wrote ``values`` was cut short by a cancel."""
    if values.get("cancelled"):
        return True
    answers = takewhile(lambda m: isinstance(m, ToolMessage), reversed(values.get("messages", [])))
    return any(m.content in CANCELLED_CALLS for m in answers)


def _cut_during_a_cancel(last: Any) -> str | None:
    """Return where a run stopped while it was being cancelled continues from, or None.

    Handed back, what the cancel saved would end the run as the cancel did, without the
    call it cut (see :func:`_made_by_a_cancel`). The run continues before the step the
    cancel cut short: ``last`` itself, or the one before when only finalize was left.
    """
    only_finalize = [task.name for task in last.tasks] == ["finalize"]
    made = _made_by_a_cancel(last)
    if only_finalize and last.parent_config is not None and (made or _step_cancelled(last.values)):
        return _checkpoint_id(last.parent_config)
    return _checkpoint_id(last.config) if made else None


def restart_point(graph: Any, thread: str) -> str | None:
    """Return the checkpoint a cancelled run continues from, or None if it did not stop so.

    A cancel routes the run to ``finalize``; the run continues from the checkpoint before
    the step that was under way then (that step runs again, this time to its end). A run
    that stopped while it was being cancelled (Ctrl-C twice) continues the same way.
    """
    last = graph.get_state({"configurable": {"thread_id": thread}})
    if last.tasks:  # stopped mid-step (a step whose writes were all saved is not in ``next``)
        return _cut_during_a_cancel(last)
    if last.parent_config is None:
        return None
    before = graph.get_state(last.parent_config)
    if tuple(before.next) != ("finalize",) or before.parent_config is None:
        return None
    return _checkpoint_id(before.parent_config)


ThreadStatus = Literal["unknown", "running", "paused", "finished", "cancelled"]


def thread_status(db: Database, thread: str) -> tuple[ThreadStatus, dict[str, object]]:
    """Return where ``thread`` stands in ``db`` and its latest output contract.

    ``finished``: finalize wrote its output (``cancelled`` when a cancel ended it; resume
    continues those); ``paused``: an interrupt waits; ``running``: the run stopped mid-way
    (a crash, a kill) and resume continues it; ``unknown``: no such thread.
    """
    from noema_graph.storage.inspect import checkpoint

    with open_backend(db) as backend:
        try:
            state = checkpoint(backend.checkpointer, thread)
        except KeyError:
            return "unknown", {}
    output: dict[str, Any] = dict(cast("Mapping[str, Any]", state.get("output") or {}))
    if state.get("__interrupts__"):
        return "paused", output
    if not output or getattr(state.get("outcome"), "node", None) != "finalize":
        return "running", output
    error = output.get("error") or {}
    return ("cancelled" if error.get("code") == "cancelled" else "finished"), output
