"""The ReAct guard: a call that only feeds a tool its own result answers the step instead."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.graphs import build_agent_graph
from noema_graph.nodes.execute_step import FED_BACK
from noema_graph.protocols.react_guard import feeds_own_result, observation_answer
from noema_graph.state.models import ReasoningStep, ToolAction
from tests.helpers import CALLS, TOOLS, cfg
from tests.scripted import plan_reply, text


def _tool(tool: str, args: dict[str, Any], observation: str, status: str = "ok") -> ReasoningStep:
    return ReasoningStep(
        kind="tool",
        thought="",
        action=ToolAction(tool=tool, input=args, output=observation),
        observation=observation,
        status=status,  # type: ignore[arg-type] -- "ok" or "error"
    )


ADDED = [_tool("add", {"a": 2, "b": 3}, "5")]


@pytest.mark.parametrize(
    "args",
    [
        {"a": 5, "b": 3},  # the quick start's loop: its own result and an old argument
        {"a": 3, "b": 5},
        {"a": 5, "b": 2},
        {"a": 2, "b": 3},  # the same call again
        {"a": "5", "b": 3.0},  # the same values written differently
    ],
)
def test_a_call_on_the_last_result_and_old_arguments_is_caught(args: dict[str, Any]) -> None:
    assert feeds_own_result("add", args, ADDED) is ADDED[0]


@pytest.mark.parametrize(
    ("tool", "args", "trace"),
    [
        ("add", {"a": 5, "b": 4}, ADDED),  # a real chain: 4 is new
        ("add", {"a": 3, "b": 2}, [_tool("sub", {"a": 2, "b": 3}, "-1")]),  # another tool
        ("add", {"a": 2, "b": 3}, [_tool("add", {"a": 2, "b": 3}, "boom", "error")]),  # failed
        ("add", {"a": 2, "b": 3}, []),
        # a structured result: following one of its parts is progress
        (
            "get_concept_graph",
            {"concept": "Halogens"},
            [_tool("get_concept_graph", {"concept": "Metals"}, '{"nodes": ["Halogens"]}')],
        ),
    ],
)
def test_new_information_is_not_caught(
    tool: str, args: dict[str, Any], trace: list[ReasoningStep]
) -> None:
    assert feeds_own_result(tool, args, trace) is None


def test_only_the_latest_tool_step_counts() -> None:
    trace = [*ADDED, _tool("lookup", {"key": "k"}, "value-of-k")]
    assert feeds_own_result("add", {"a": 5, "b": 3}, trace) is None


def test_the_answer_is_the_tools_data() -> None:
    envelope = json.dumps({"status": "success", "data": {"exit_code": 0, "output": "391\n"}})
    assert observation_answer(_tool("python_executor", {"code": "x"}, envelope)) == "391"
    assert observation_answer(ADDED[0]) == "5"
    listing = json.dumps({"status": "success", "data": {"cards": [1, 2]}})
    assert observation_answer(_tool("t", {}, listing)) == '{"cards": [1, 2]}'


def test_the_quick_start_loop_ends_with_the_tools_answer(scripted: Any) -> None:
    """What the embedded model did: add(2, 3) = 5, then add(5, 3), add(8, 3)..."""
    CALLS.clear()
    model = scripted(
        plan_reply("Add 2 and 3 with the add tool"),
        text('Thought: I need a tool.\nAction: add\nAction Input: {"a": 2, "b": 3}'),
        text('Thought: I need a tool.\nAction: add\nAction Input: {"a": 5, "b": 3}'),
    )
    graph = build_agent_graph(
        cfg(protocol="react"), model=model, tools=TOOLS, checkpointer=InMemorySaver()
    )
    state = graph.invoke(
        {"messages": [("user", "Use the add tool to add 2 and 3.")]},
        {"configurable": {"thread_id": "q"}},
    )
    out = state["output"]
    assert out["success"] and out["result"] == "5"
    assert CALLS == [("add", {"a": 2, "b": 3})]  # add(5, 3) never ran
    answered = [s for s in out["reasoning"]["steps"] if s["kind"] == "thought"]
    assert answered[-1]["thought"].endswith(FED_BACK)
    model.assert_complete()
