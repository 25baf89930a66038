"""The live view's reducer, its stream adapter and its two renderers, without a terminal."""

from __future__ import annotations

import io
from functools import reduce
from typing import Any

from rich.console import Console

from noema_graph.cli.live import (
    RunView,
    ViewState,
    answer_panel,
    apply,
    events_of,
    plain_line,
    render,
    view_mode,
)
from noema_graph.state.models import TaskPlan, TaskStep, Usage

RUN: list[dict[str, Any]] = [
    {"type": "turn_start", "request": "add", "mode": "agent"},
    {"type": "node_start", "node": "plan"},
    {"type": "plan_created", "goal": "Add numbers", "steps": ["add 2 and 3", "report"]},
    {"type": "node_end", "node": "plan", "tokens": 15, "cost_usd": 0.001},
    {"type": "node_start", "node": "execute_step"},
    {"type": "thinking", "node": "execute_step", "text": "I add them."},
    {"type": "tool_call_start", "call_id": "c1", "tool": "add", "input": {"a": 2, "b": 3}},
]


def _fold(events: list[dict[str, Any]], state: ViewState | None = None) -> ViewState:
    return reduce(apply, events, state or ViewState())


def _text(renderable: Any, width: int = 100) -> str:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(renderable)
    return out.getvalue()


def test_a_run_in_progress_shows_plan_call_tokens_and_what_it_waits_for() -> None:
    state = _fold(RUN)
    assert state.goal == "Add numbers" and state.current == 0
    assert [s.status for s in state.steps] == ["in_progress", "pending"]
    assert state.node == "execute_step" and state.thought == "I add them."
    (call,) = state.calls
    assert (call.tool, call.status, call.args) == ("add", "running", '{"a": 2, "b": 3}')
    assert (state.tokens, state.cost_usd) == (15, 0.001)
    shown = _text(render(state))
    assert "Add numbers" in shown and "add 2 and 3" in shown and "report" in shown
    assert "running add" in shown and "15 tokens" in shown and "$0.001000" in shown


def test_tool_end_plan_progress_and_turn_end() -> None:
    end = {
        "type": "tool_call_end",
        "call_id": "c1",
        "tool": "add",
        "status": "error",
        "output": "boom",
        "duration_ms": 1500.0,
    }
    plan = {
        "goal": "Add numbers",
        "steps": [
            {"description": "add 2 and 3", "status": "completed"},
            {"description": "report", "status": "in_progress"},
        ],
        "current": 1,
        "complete": False,
    }
    state = _fold(
        [
            *RUN,
            end,
            {"type": "node_end", "node": "tool_node", "tokens": 0, "cost_usd": 0.0},
            {
                "type": "node_end",
                "node": "execute_step",
                "tokens": 10,
                "cost_usd": None,
                "plan": plan,
            },
            {"type": "content_chunk", "text": "5"},
            {"type": "turn_end", "success": True, "total_tokens": 40, "cost_usd": None},
        ]
    )
    (call,) = state.calls
    assert (call.status, call.duration_ms, call.output) == ("error", 1500.0, "boom")
    assert [s.status for s in state.steps] == ["completed", "in_progress"] and state.current == 1
    assert state.cost_usd is None  # an unknown price stays unknown
    assert (state.finished, state.success, state.tokens, state.answer) == (True, True, 40, "5")
    shown = _text(render(state))
    assert "1.5s" in shown and "error" in shown and "40 tokens | cost unknown" in shown


def test_notices_and_unknown_events() -> None:
    state = _fold(
        [
            {"type": "warning", "code": "plan_fallback", "message": "answering directly"},
            {"type": "reflection", "decision": "replan", "reason": "stuck"},
            {"type": "something_new", "x": 1},
        ]
    )
    assert state.notices == (
        "warning plan_fallback: answering directly",
        "reflection: replan (stuck)",
    )
    assert apply(ViewState(), {"type": "something_new"}) == ViewState()


def test_events_of_turns_task_chunks_into_node_events() -> None:
    plan = TaskPlan(
        goal="g",
        steps=(TaskStep(description="a", status="completed"), TaskStep(description="b")),
        current_step_index=1,
    )
    start = events_of("tasks", {"id": "1", "name": "plan", "input": {}, "triggers": ()})
    assert start == [{"type": "node_start", "node": "plan"}]
    usage = Usage(total_tokens=12, cost_usd=0.5)
    (end,) = events_of(
        "tasks",
        {"id": "1", "name": "plan", "error": None, "result": {"usage": usage, "plan": plan}},
    )
    assert (end["type"], end["tokens"], end["cost_usd"]) == ("node_end", 12, 0.5)
    assert end["plan"]["steps"][0] == {"description": "a", "status": "completed"}
    assert end["plan"]["current"] == 1
    custom = {"type": "thinking", "node": "x", "text": "hm"}
    assert events_of("custom", custom) == [custom]
    assert events_of("updates", {"plan": {}}) == []


def test_a_plan_line_holds_the_request_on_one_line() -> None:
    event = {"type": "plan_created", "goal": "Is it right?\n\n[learner: ben]", "steps": ["a"]}
    assert plain_line(event) == "[bold]plan[/bold] Is it right? \\[learner: ben]\n  1. a"


def test_plain_lines_escape_markup() -> None:
    line = plain_line({"type": "tool_call_start", "call_id": "1", "tool": "t", "input": "[red]x"})
    assert line is not None and _text(line).strip() == 'tool t("[red]x")'
    assert plain_line({"type": "node_start", "node": "plan"}) is None


def test_plain_view_prints_lines_and_notes_and_silent_prints_nothing() -> None:
    out = io.StringIO()
    view = RunView(Console(file=out, width=200, color_system=None), "plain")
    with view.segment():
        view.feed(RUN[2])
        view.note("cancelling")
    assert out.getvalue().splitlines() == [
        "plan Add numbers",
        "  1. add 2 and 3",
        "  2. report",
        "cancelling",
    ]
    quiet = io.StringIO()
    silent = RunView(Console(file=quiet), "silent")
    with silent.segment():
        for event in RUN:
            silent.feed(event)
    assert quiet.getvalue() == "" and silent.state.goal == "Add numbers"


def test_view_mode_and_answer_panel() -> None:
    terminal = Console(file=io.StringIO(), force_terminal=True)
    assert view_mode(terminal, stdout_is_terminal=True, quiet=False) == "live"
    assert view_mode(terminal, stdout_is_terminal=False, quiet=False) == "plain"
    assert view_mode(terminal, stdout_is_terminal=True, quiet=True) == "silent"
    ok = _text(answer_panel({"success": True, "result": "the answer"}))
    assert "answer" in ok and "the answer" in ok
    stopped = _text(
        answer_panel({"success": False, "result": {"k": 1}, "error": {"code": "timeout"}})
    )
    assert "stopped: timeout" in stopped and "'k': 1" in stopped


def test_live_view_draws_on_a_terminal_and_keeps_the_last_frame() -> None:
    out = io.StringIO()
    terminal = Console(file=out, force_terminal=True, width=100, color_system=None)
    view = RunView(terminal, "live")
    with view.segment():
        for event in RUN:
            view.feed(event)
        view.note("cancelling")
    shown = out.getvalue()
    assert "Add numbers" in shown and "running add" in shown and "cancelling" in shown
    assert "plan Add numbers" not in shown  # no plain lines on a terminal
