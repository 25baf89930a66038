"""The view of a run while it works: a pure reducer over its events and two renderers.

:func:`apply` folds one event into a :class:`ViewState` and never prints, so the view is
tested without a terminal. The events are the graph's ``custom`` stream (see
:mod:`noema_graph.events`) plus two the CLI derives from LangGraph's ``tasks`` stream
(:func:`events_of`): ``node_start`` (a node began: the spinner says what it waits for) and
``node_end`` (its token and cost delta, the plan's step statuses).

:class:`RunView` shows the state: a rich ``Live`` panel on a terminal, one plain line per
event otherwise, or nothing (``--quiet`` / ``--json``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.pretty import Pretty
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from noema_graph.state.models import TaskPlan, Usage

Event = Mapping[str, Any]
CallStatus = Literal["running", "ok", "error"]
ViewMode = Literal["live", "plain", "silent"]
STREAM_MODES: list[str] = ["custom", "tasks"]
"""What the CLI asks ``graph.stream`` for: the activity events and the node boundaries."""
SHOWN_CALLS = 8
"""Tool calls the live view lists (the latest ones)."""
_WAITING = {
    "plan": "planning",
    "execute_step": "the model is thinking",
    "reflect": "reflecting",
    "revise_plan": "revising the plan",
    "recall_memory": "recalling memory",
    "generate_answer": "the model is answering",
    "finalize": "writing the answer",
    "review_tools": "waiting for approval",
}
_STEP_MARK = {"completed": "[green]✓[/]", "in_progress": "[cyan]▶[/]", "failed": "[red]✗[/]"}
_CALL_MARK = {"running": "[cyan]…[/]", "ok": "[green]ok[/]", "error": "[red]error[/]"}


@dataclass(frozen=True, slots=True)
class StepView:
    """One plan step as shown: its text and status (pending, in_progress, completed...)."""

    description: str
    status: str = "pending"


@dataclass(frozen=True, slots=True)
class CallView:
    """One tool call as shown: arguments, status and, once it ended, duration and output."""

    call_id: str
    tool: str
    args: str
    status: CallStatus = "running"
    duration_ms: float | None = None
    output: str = ""


@dataclass(frozen=True, slots=True)
class ViewState:
    """Everything the live view shows; built only by :func:`apply`."""

    goal: str = ""
    steps: tuple[StepView, ...] = ()
    current: int | None = None
    node: str | None = None
    calls: tuple[CallView, ...] = ()
    tokens: int = 0
    cost_usd: float | None = 0.0
    thought: str = ""
    notices: tuple[str, ...] = ()
    answer: str = ""
    finished: bool = False
    success: bool | None = None
    stop_reason: str | None = None


def apply(state: ViewState, event: Event) -> ViewState:
    """Return ``state`` with ``event`` applied; unknown events leave it unchanged."""
    handler = _HANDLERS.get(str(event.get("type")))
    if handler is not None:
        return handler(state, event)
    notice = _notice(event)
    return state if notice is None else replace(state, notices=(*state.notices, notice))


def _plan(state: ViewState, event: Event) -> ViewState:
    steps = tuple(StepView(str(text)) for text in event.get("steps", ()))
    if event.get("type") == "plan_created" and steps:
        steps = (replace(steps[0], status="in_progress"), *steps[1:])
    return replace(state, goal=str(event.get("goal", "")), steps=steps, current=0)


def _call_started(state: ViewState, event: Event) -> ViewState:
    call = CallView(str(event["call_id"]), str(event["tool"]), _args(event.get("input")))
    return replace(state, calls=(*state.calls, call))


def _turn_end(state: ViewState, event: Event) -> ViewState:
    return replace(
        state,
        finished=True,
        node=None,
        success=bool(event.get("success")),
        stop_reason=event.get("stop_reason"),
        tokens=int(event.get("total_tokens") or state.tokens),
        cost_usd=event.get("cost_usd", state.cost_usd),
    )


def _node_end(state: ViewState, event: Event) -> ViewState:
    tokens = state.tokens + int(event.get("tokens") or 0)
    cost = state.cost_usd
    delta = event.get("cost_usd", 0.0)
    cost = None if cost is None or delta is None else cost + float(delta)
    plan = event.get("plan")
    if not isinstance(plan, Mapping):
        return replace(state, node=None, tokens=tokens, cost_usd=cost)
    steps = tuple(StepView(str(s["description"]), str(s["status"])) for s in plan["steps"])
    current = None if plan.get("complete") else int(plan.get("current", 0))
    return replace(
        state,
        node=None,
        tokens=tokens,
        cost_usd=cost,
        goal=str(plan.get("goal", state.goal)),
        steps=steps,
        current=current if current is not None and current < len(steps) else None,
    )


def _ended(call: CallView, event: Event) -> CallView:
    if call.call_id != str(event.get("call_id")):
        return call
    status: CallStatus = "ok" if event.get("status") == "ok" else "error"
    return replace(
        call,
        status=status,
        duration_ms=float(event.get("duration_ms") or 0.0),
        output=str(event.get("output", "")),
    )


_HANDLERS: dict[str, Callable[[ViewState, Event], ViewState]] = {
    "plan_created": _plan,
    "plan_revised": _plan,
    "node_start": lambda state, event: replace(state, node=str(event.get("node"))),
    "node_end": _node_end,
    "tool_call_start": _call_started,
    "tool_call_end": lambda state, event: replace(
        state, calls=tuple(_ended(call, event) for call in state.calls)
    ),
    "thinking": lambda state, event: replace(state, thought=str(event.get("text", ""))),
    "content_chunk": lambda state, event: replace(
        state, answer=state.answer + str(event.get("text", ""))
    ),
    "turn_end": _turn_end,
}
"""How each event type changes the view; the others may add a notice (:func:`_notice`)."""


def _notice(event: Event) -> str | None:
    kind = event.get("type")
    if kind in ("error", "warning", "hook_failed"):
        return f"{kind} {event.get('code')}: {event.get('message')}"
    if kind == "reflection":
        return f"reflection: {event.get('decision')} ({event.get('reason')})"
    if kind == "compaction":
        return f"compaction: {event.get('before_tokens')} -> {event.get('after_tokens')} tokens"
    if kind == "human_input_requested":
        return f"waiting for you ({event.get('kind')})"
    return None


def _args(value: object) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)[:120]


def events_of(mode: str, chunk: Any) -> list[dict[str, object]]:
    """Return the view events of one ``graph.stream`` item of ``mode`` (custom or tasks)."""
    if not isinstance(chunk, Mapping):
        return []
    if mode == "custom":
        return [dict(chunk)]
    if mode != "tasks":
        return []
    name = str(chunk.get("name"))
    if "input" in chunk:
        return [{"type": "node_start", "node": name}]
    result = chunk.get("result")
    event: dict[str, object] = {"type": "node_end", "node": name, "tokens": 0, "cost_usd": 0.0}
    if isinstance(result, Mapping):
        usage = result.get("usage")
        if isinstance(usage, Usage):
            event.update(tokens=usage.total_tokens, cost_usd=usage.cost_usd)
        plan = result.get("plan")
        if isinstance(plan, TaskPlan):
            event["plan"] = {
                "goal": plan.goal,
                "steps": [{"description": s.description, "status": s.status} for s in plan.steps],
                "current": plan.current_step_index,
                "complete": plan.is_complete,
            }
    return [event]


def plain_line(event: Event) -> str | None:
    """Return the rich-markup line a plain (non-terminal) view prints for ``event``, if any."""
    kind = event.get("type")
    if kind == "plan_created":
        steps = "".join(f"\n  {i}. {escape(str(s))}" for i, s in enumerate(event["steps"], 1))
        goal = " ".join(str(event["goal"]).split())  # the request's lines, on the plan's one
        return f"[bold]plan[/bold] {escape(goal)}{steps}"
    if kind == "tool_call_start":
        return (
            f"[cyan]tool[/cyan] {escape(str(event['tool']))}({escape(_args(event.get('input')))})"
        )
    if kind == "tool_call_end":
        colour = "green" if event["status"] == "ok" else "red"
        took = float(event.get("duration_ms") or 0.0) / 1000
        output = escape(str(event.get("output", ""))[:200])
        return f"  -> [{colour}]{event['status']}[/] {took:.1f}s {output}"
    if kind == "thinking":
        return f"[dim]thinking: {escape(str(event['text'])[:300])}[/dim]"
    notice = _notice(event)
    return None if notice is None else f"[yellow]{escape(notice)}[/yellow]"


def render(state: ViewState, spinner: Spinner | None = None) -> RenderableType:
    """Return the live view of ``state``: plan, tool calls, spinner, tokens and cost.

    ``spinner`` is the one to animate (a new one each frame would never turn); its text is
    set here.
    """
    parts: list[RenderableType] = []
    if state.steps:
        plan = Table.grid(padding=(0, 1))
        for i, step in enumerate(state.steps):
            mark = _STEP_MARK.get(step.status, "[dim]·[/]")
            style = "bold" if i == state.current else ""
            plan.add_row(Text.from_markup(mark), Text(step.description, style=style))
        parts.append(Panel(plan, title=escape(state.goal[:80]) or "plan", title_align="left"))
    if state.calls:
        calls = Table("tool", "arguments", "status", "time", box=None, padding=(0, 1))
        for call in state.calls[-SHOWN_CALLS:]:
            took = "" if call.duration_ms is None else f"{call.duration_ms / 1000:.1f}s"
            calls.add_row(
                call.tool, Text(call.args, overflow="ellipsis", no_wrap=True),
                Text.from_markup(_CALL_MARK[call.status]), took,
            )  # fmt: skip
        parts.append(calls)
    if state.thought and not state.finished:
        parts.append(
            Text(f"thought: {state.thought}", style="dim", overflow="ellipsis", no_wrap=True)
        )
    for notice in state.notices[-3:]:
        parts.append(Text(notice, style="yellow"))
    parts.append(_footer(state, spinner or Spinner("dots")))
    return Group(*parts)


def _footer(state: ViewState, spinner: Spinner) -> RenderableType:
    cost = "cost unknown" if state.cost_usd is None else f"${state.cost_usd:.6f}"
    figures = f"{state.tokens} tokens | {cost}"
    if state.finished or state.node is None:
        return Text(figures, style="dim")
    running = [c.tool for c in state.calls if c.status == "running"]
    doing = f"running {', '.join(running)}" if running else _WAITING.get(state.node, state.node)
    spinner.update(text=Text(f"{doing} | {figures}", style="dim"))
    return spinner


def answer_panel(output: Mapping[str, object]) -> Panel:
    """Return the final answer in a panel titled with how the run ended."""
    result = output.get("result")
    body: RenderableType = Text(result) if isinstance(result, str) else Pretty(result)
    if output.get("success"):
        return Panel(body, title="answer", title_align="left", border_style="green")
    error = output.get("error") or {}
    code = error.get("code") if isinstance(error, Mapping) else None
    code = code or output.get("outcome") or "no output"
    return Panel(body, title=f"stopped: {code}", title_align="left", border_style="yellow")


class RunView:
    """Shows a run on ``console``: live on a terminal, plain lines, or nothing."""

    def __init__(self, console: Console, mode: ViewMode) -> None:
        """Show on ``console`` in ``mode`` (see :func:`view_mode`)."""
        self.console = console
        self.mode: ViewMode = mode
        self.state = ViewState()
        self.notes: list[str] = []
        self._printed_notes = 0
        self._notes_lock = threading.Lock()  # note() comes from Ctrl-C's watcher thread
        self._spinner = Spinner("dots")

    def feed(self, event: Event) -> None:
        """Apply ``event`` to the view (and print its line in plain mode)."""
        self.state = apply(self.state, event)
        if self.mode == "plain":
            self._print_notes()
            if (line := plain_line(event)) is not None:
                self.console.print(line)

    def note(self, text: str) -> None:
        """Add a note from outside the run (another thread, such as Ctrl-C's watcher).

        The live view shows it at its next refresh. In plain mode it is written at once
        with one unbuffered ``os.write`` when the console has a file descriptor (so it is
        not held in a buffer behind the run's lines), else printed before the next line.
        """
        with self._notes_lock:
            self.notes.append(text)
            if self.mode == "plain" and _write_now(self.console, text):
                self._printed_notes = len(self.notes)

    def _print_notes(self) -> None:
        with self._notes_lock:
            waiting, self._printed_notes = self.notes[self._printed_notes :], len(self.notes)
        for text in waiting:
            self.console.print(Text(text, style="yellow"))

    def _renderable(self) -> RenderableType:
        view = render(self.state, self._spinner)
        notes = [Text(text, style="yellow") for text in self.notes]
        return Group(view, *notes) if notes else view

    @contextmanager
    def segment(self) -> Generator[None]:
        """Show the live view while the block streams (prompts come between segments)."""
        if self.mode != "live":
            try:
                yield
            finally:
                if self.mode == "plain":
                    self._print_notes()
            return
        with Live(
            get_renderable=self._renderable,
            console=self.console,
            refresh_per_second=8,
            transient=False,
        ):
            yield


def _write_now(console: Console, text: str) -> bool:
    try:
        descriptor = console.file.fileno()
    except (AttributeError, OSError, ValueError):  # a StringIO, a test runner's capture
        return False
    os.write(descriptor, f"{text}\n".encode())
    return True


def view_mode(console: Console, *, stdout_is_terminal: bool, quiet: bool) -> ViewMode:
    """Return how to show a run: nothing when quiet, live when both streams are terminals."""
    if quiet:
        return "silent"
    return "live" if console.is_terminal and stdout_is_terminal else "plain"
