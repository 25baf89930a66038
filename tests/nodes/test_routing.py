"""Routers and limit checks on plain dict states."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.types import Send

from noema_graph.config import AgentConfig
from noema_graph.context import RunContext
from noema_graph.grounding import seen_in
from noema_graph.grounding.recovery import failed_calls
from noema_graph.nodes import routing
from noema_graph.nodes.routing import failed_so_far, seen_so_far
from noema_graph.state.models import (
    LoopGuard,
    ReasoningStep,
    Reflection,
    TaskPlan,
    TaskStep,
    ToolAction,
    ToolTime,
    Usage,
)
from noema_graph.state.reducers import add_tool_time, append_steps

CONFIG = AgentConfig(
    max_iterations=10,
    reflection_interval=3,
    max_replans=2,
    timeout_s=60,
    max_total_tokens=1000,
    max_cost_usd=0.5,
)


def _plan(done: bool = False) -> TaskPlan:
    return TaskPlan(goal="g", steps=(TaskStep(description="s"),), is_complete=done)


def _tool_step(
    tool: str = "t", args: dict[str, object] | None = None, rnd: int = 1, ms: float = 0.0
) -> ReasoningStep:
    return ReasoningStep(
        kind="tool", action=ToolAction(tool=tool, input=args or {"a": 1}), round=rnd, duration_ms=ms
    )


def _state(**kw: object) -> dict[str, object]:
    return {"plan": _plan(), "iteration": 1, "messages": [HumanMessage("hi")], **kw}


@pytest.mark.parametrize(
    ("update", "reason"),
    [
        ({"cancelled": True}, "cancelled"),
        ({"llm_error": "boom"}, "llm_error"),
        ({"elapsed_s": 60.0}, "timeout"),
        ({"usage": Usage(total_tokens=1000)}, "budget_exceeded"),
        ({"usage": Usage(cost_usd=0.5)}, "budget_exceeded"),
        ({"iteration": 10}, "max_iterations"),
        ({"remaining_steps": 3}, "max_iterations"),
        ({}, None),
        ({"usage": Usage(total_tokens=999, cost_usd=None)}, None),
    ],
)
def test_budget_reason(update: dict[str, object], reason: str | None) -> None:
    assert routing.budget_reason(_state(**update), CONFIG) == reason


def test_timeout_counts_slowest_tool_per_group() -> None:
    writes = [
        ToolTime(group="1:0", group_max=20.0, total=20.0),
        ToolTime(group="1:0", group_max=30.0, total=30.0),
        ToolTime(group="2:0", group_max=25.0, total=25.0),
    ]
    tool_time = None
    for write in writes:
        tool_time = add_tool_time(tool_time, write)
    state = _state(tool_time=tool_time, elapsed_s=4.0)
    assert routing.active_seconds(state) == pytest.approx(59.0)
    assert routing.budget_reason(state, CONFIG) is None
    assert routing.budget_reason({**state, "elapsed_s": 5.0}, CONFIG) == "timeout"


def test_abort_event_and_context_budgets() -> None:
    abort = threading.Event()
    ctx = RunContext(abort=abort, max_cost_usd=0.01, timeout_s=1.0)
    assert routing.budget_reason(_state(), CONFIG, ctx) is None
    assert (
        routing.budget_reason(_state(usage=Usage(cost_usd=0.02)), CONFIG, ctx) == "budget_exceeded"
    )
    assert routing.budget_reason(_state(elapsed_s=1.5), CONFIG, ctx) == "timeout"
    abort.set()
    assert routing.budget_reason(_state(), CONFIG, ctx) == "cancelled"


def test_loop_detection_reflects_then_stops() -> None:
    three = [_tool_step(), _tool_step(), _tool_step()]
    assert routing.loop_state(_state(trace=three[:2]), CONFIG) == "ok"
    assert routing.loop_state(_state(trace=three), CONFIG) == "reflect"
    sig, streak = routing.repeat_streak(three)
    guarded = _state(trace=three, loop_guard=LoopGuard(signature=sig or "", streak=streak))
    assert routing.loop_state(guarded, CONFIG) == "ok"
    four = _state(trace=[*three, _tool_step()], loop_guard=LoopGuard(signature=sig or "", streak=3))
    assert routing.loop_state(four, CONFIG) == "stop"
    assert routing.stop_reason(four, CONFIG) == "loop_detected"


def test_different_args_or_finished_step_break_the_streak() -> None:
    trace = [_tool_step(), _tool_step(args={"a": 2}), _tool_step()]
    assert routing.repeat_streak(trace)[1] == 1
    trace = [_tool_step(), _tool_step(), ReasoningStep(kind="thought"), _tool_step()]
    assert routing.repeat_streak(trace)[1] == 1


def _ids(sends: list[Send]) -> list[list[str]]:
    return [[c["tool_call"]["id"] for c in s.arg["calls"]] for s in sends]


def test_route_after_execute_sends_an_unsafe_call_alone() -> None:
    ai = AIMessage(
        content="thinking",
        tool_calls=[{"name": "a", "args": {}, "id": "1"}, {"name": "b", "args": {}, "id": "2"}],
    )
    state = _state(messages=[HumanMessage("x"), ai])
    sends = routing.route_after_execute(state, CONFIG, safe={"b"})
    assert isinstance(sends, list)
    assert _ids(sends) == [["1"]]
    answered = {**state, "messages": [*state["messages"], ToolMessage("ok", tool_call_id="1")]}
    after = routing.route_after_tools(answered, CONFIG, safe={"b"})
    assert isinstance(after, list)
    assert _ids(after) == [["2"]]
    done = {**answered, "messages": [*answered["messages"], ToolMessage("ok", tool_call_id="2")]}
    assert routing.route_after_tools(done, CONFIG, safe={"b"}) == "execute_step"


def test_next_group_keeps_order_and_groups_consecutive_safe_calls() -> None:
    names = ["read", "read", "write", "read", "read", "read"]
    pending = [(i, {"name": n, "id": str(i)}) for i, n in enumerate(names)]
    groups = []
    while pending:
        group = routing.next_group(pending, {"read"}, cap=2)
        groups.append([i for i, _ in group])
        pending = pending[len(group) :]
    assert groups == [[0, 1], [2], [3, 4], [5]]


def test_route_after_execute_sends_safe_calls_together() -> None:
    ai = AIMessage(
        content="thinking",
        tool_calls=[{"name": "a", "args": {}, "id": "1"}, {"name": "b", "args": {}, "id": "2"}],
    )
    sends = routing.route_after_execute(
        _state(messages=[HumanMessage("x"), ai]), CONFIG, safe={"a", "b"}
    )
    assert isinstance(sends, list)
    assert all(isinstance(s, Send) and s.node == "tool_node" for s in sends)
    assert _ids(sends) == [["1", "2"]]  # one task runs both, concurrently
    assert [c["index"] for c in sends[0].arg["calls"]] == [0, 1]
    assert sends[0].arg["calls"][0]["thought"] == "thinking"


def test_route_after_execute_only_sends_unanswered_calls() -> None:
    ai = AIMessage(
        content="",
        tool_calls=[{"name": "a", "args": {}, "id": "1"}, {"name": "b", "args": {}, "id": "2"}],
    )
    state = _state(messages=[ai, ToolMessage("ok", tool_call_id="1")])
    sends = routing.route_after_execute(state, CONFIG)
    assert isinstance(sends, list)
    assert _ids(sends) == [["2"]]


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ({}, "execute_step"),
        ({"plan": _plan(done=True)}, "finalize"),
        ({"iteration": 3}, "reflect"),
        ({"iteration": 3, "last_reflection_at": 3}, "execute_step"),
        ({"iteration": 10}, "finalize"),
        ({"usage": Usage(total_tokens=5000)}, "finalize"),
    ],
)
def test_route_after_execute(update: dict[str, object], expected: str) -> None:
    assert routing.route_after_execute(_state(**update), CONFIG) == expected


def test_limit_skips_tools_and_finalizes() -> None:
    ai = AIMessage(content="", tool_calls=[{"name": "a", "args": {}, "id": "1"}])
    state = _state(messages=[ai], usage=Usage(total_tokens=5000))
    assert routing.route_after_execute(state, CONFIG) == "finalize"


@pytest.mark.parametrize(
    ("decision", "update", "expected"),
    [
        ("continue", {}, "execute_step"),
        ("revise", {}, "revise_plan"),
        ("revise", {"replans": 2}, "execute_step"),
        ("finish", {}, "finalize"),
        ("continue", {"cancelled": True}, "finalize"),
        ("continue", {"plan": _plan(done=True)}, "finalize"),
    ],
)
def test_route_after_reflect(decision: str, update: dict[str, object], expected: str) -> None:
    reflection = Reflection(progress="p", remaining="r", decision=decision, reason="x")  # type: ignore[arg-type]
    assert routing.route_after_reflect(_state(reflection=reflection, **update), CONFIG) == expected


def test_route_after_reflect_without_reflection_finalizes() -> None:
    assert routing.route_after_reflect(_state(), CONFIG) == "finalize"


def test_route_before_model() -> None:
    assert routing.route_before_model(_state(), CONFIG) == "call_model"
    assert routing.route_before_model(_state(iteration=3), CONFIG) == "reflect"
    assert routing.route_before_model(_state(cancelled=True), CONFIG) == "finalize"


def test_execute_step_is_not_entered_when_a_reflection_is_due() -> None:
    state = {
        "messages": [HumanMessage("x")],
        "iteration": 3,
        "last_reflection_at": 0,
        "plan": TaskPlan(goal="g", steps=(TaskStep(description="s"),)),
    }
    assert routing.route_next(state, CONFIG) == "reflect"


def test_a_cancelled_run_goes_to_finalize_without_the_model() -> None:
    abort = threading.Event()
    abort.set()
    state = {"messages": [HumanMessage("x")]}
    assert routing.route_next(state, CONFIG, RunContext(abort=abort)) == "finalize"


def _result(tool: str, args: dict[str, Any], data: Any, status: str = "ok") -> ReasoningStep:
    output = {"status": "success" if status == "ok" else "error", "data": data}
    action = ToolAction(tool=tool, input=args, output=output)
    return ReasoningStep(kind="tool", action=action, status=status, observation="x")  # type: ignore[arg-type] -- literal


def test_grounding_folds_the_trace_as_it_grows_with_the_same_answer_as_a_full_scan() -> None:
    request = "Move card 5 to category 9 [learner: ada, user_id 1]"
    writes = [
        _result("list_categories", {}, {"categories": [{"id": 7, "name": "Geography"}]}),
        _result("move_card", {"card_id": 5, "category_id": 55}, None, status="error"),
        _result("search_cards", {"query": "x"}, {"cards": [{"card_id": 5, "front": "f"}]}),
        _result("get_card", {"card_id": 12}, {"card": {"id": 12, "title": "Rome"}}),
        _result("move_card", {"card_id": 12, "category_id": 7}, {"moved": True}),
        _result("move_card", {"card_id": 12, "category_id": 99}, None, status="error"),
    ]
    trace = append_steps(None, [])
    for step in writes:
        trace = append_steps(trace, [[step]])
        folded, scanned = seen_so_far(request, trace), seen_in(request, trace)
        assert (folded.ids, folded.names) == (scanned.ids, scanned.names)
        assert list(folded.ids) == list(scanned.ids)  # kinds in the same order
        for read_only in ((), {"search_cards", "list_categories", "get_card"}):
            assert failed_so_far(trace, read_only) == failed_calls(trace, read_only)
        folded.add_id("card", 777)  # the caller's own copy: the next fold does not see it
    assert 777 not in seen_so_far(request, trace).ids["card"]
