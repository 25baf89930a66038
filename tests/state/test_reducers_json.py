"""Reducers on state that went through JSON: plain dicts are validated back into the models.

A LangGraph server (``langgraph dev``) hands the graph state it read back from JSON, so the
current value and the writes of every reducer may be dicts where the nodes write models.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import ValidationError

from noema_graph.state.agent import AgentState
from noema_graph.state.models import ReasoningStep, ToolAction, ToolTime, Usage
from noema_graph.state.reducers import (
    add_seconds,
    add_tool_time,
    add_usage,
    append_steps,
    apply_update,
    latest,
    merge_messages,
)


def _json(value: Any) -> Any:
    """Return ``value`` the way a JSON round trip gives it back: dicts and lists."""
    if isinstance(value, list):
        return [_json(v) for v in value]
    return json.loads(json.dumps(value.model_dump(mode="json")))


def test_merge_messages_accepts_dict_history_and_dict_writes() -> None:
    history = _json([HumanMessage("hi", id="1"), AIMessage("hello", id="2")])
    assert isinstance(history[0], dict)
    merged = merge_messages(history, [[{"role": "user", "content": "more", "id": "3"}]])
    assert [(type(m).__name__, m.content, m.id) for m in merged] == [
        ("HumanMessage", "hi", "1"),
        ("AIMessage", "hello", "2"),
        ("HumanMessage", "more", "3"),
    ]
    # a dict write with an existing id replaces, as a message would
    again = merge_messages(merged, [[{"type": "ai", "content": "HELLO", "id": "2"}]])
    assert [m.content for m in again] == ["hi", "HELLO", "more"]


def test_append_steps_validates_dict_trace_and_dict_entries() -> None:
    trace = _json(
        [
            ReasoningStep(step=1, thought="plan"),
            ReasoningStep(step=2, kind="tool", action=ToolAction(tool="add", input={"a": 1})),
        ]
    )
    steps = append_steps(trace, [[{"thought": "next"}], [ReasoningStep(thought="last")]])
    assert all(isinstance(s, ReasoningStep) for s in steps)
    assert [(s.step, s.thought) for s in steps] == [(1, "plan"), (2, ""), (3, "next"), (4, "last")]
    assert steps[1].action == ToolAction(tool="add", input={"a": 1})


def test_append_steps_rejects_a_dict_that_is_no_step() -> None:
    with pytest.raises(ValidationError, match="kind"):
        append_steps([], [[{"kind": "not-a-kind"}]])


def test_add_usage_accepts_dicts_on_either_side() -> None:
    current = _json(Usage(prompt_tokens=3, total_tokens=3, cost_usd=0.25, model_calls=1))
    total = add_usage(current, {"prompt_tokens": 2, "total_tokens": 2, "cost_usd": 0.5})
    assert total == Usage(prompt_tokens=5, total_tokens=5, cost_usd=0.75, model_calls=1)
    assert add_usage(current, None) == Usage.model_validate(current)
    assert add_usage(current, {"cost_usd": None}).cost_usd is None


def test_add_tool_time_accepts_dicts_on_either_side() -> None:
    current = _json(ToolTime(group="g1", group_max=2.0, total=2.0))
    same_group = add_tool_time(current, {"group": "g1", "group_max": 3.0})
    assert same_group == ToolTime(group="g1", group_max=3.0, total=3.0)
    next_group = add_tool_time(same_group, _json(ToolTime(group="g2", group_max=1.0)))
    assert next_group == ToolTime(group="g2", group_max=1.0, total=4.0)
    assert add_tool_time(current, None) == ToolTime.model_validate(current)


def test_add_seconds_and_latest_take_json_values_as_they_are() -> None:
    # plain JSON numbers and values: nothing to coerce, the reducers must still accept them
    assert add_seconds(json.loads("1.5"), json.loads("2")) == 3.5
    outcome = {"node": "plan", "outcome": "continue", "detail": ""}
    assert latest(None, outcome) == outcome
    assert latest(outcome, None) == outcome


def test_apply_update_on_a_state_read_back_from_json() -> None:
    state = {
        "messages": _json([HumanMessage("hi", id="1")]),
        "trace": _json([ReasoningStep(step=1, thought="a")]),
        "usage": _json(Usage(total_tokens=1)),
        "tool_time": _json(ToolTime(group="g", group_max=1.0, total=1.0)),
        "elapsed_s": 1.0,
    }
    update = {
        "messages": [AIMessage("ok", id="2")],
        "trace": [ReasoningStep(thought="b")],
        "usage": Usage(total_tokens=2),
        "tool_time": ToolTime(group="h", group_max=0.5),
        "elapsed_s": 0.5,
    }
    merged = apply_update(AgentState, state, update)
    assert [m.id for m in merged["messages"]] == ["1", "2"]
    assert [s.step for s in merged["trace"]] == [1, 2]
    assert merged["usage"] == Usage(total_tokens=3)
    assert merged["tool_time"].total == 1.5
    assert merged["elapsed_s"] == 1.5
