"""The ReAct text protocol, end to end and in the parser."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.graphs import build_agent_graph
from noema_graph.nodes.execute_step import OBSERVATION_NUDGE
from noema_graph.protocols.react import extract_action_input, parse_response
from tests.helpers import CALLS, TOOLS, cfg
from tests.scripted import plan_reply, text


def test_react_run_produces_the_same_trace(scripted: Any) -> None:
    CALLS.clear()
    model = scripted(
        plan_reply("add"),
        text('Thought: I need the sum.\nAction: add\nAction Input: {"a": 1, "b": 2}'),
        text("Thought: I have it.\nFinal Answer: 3"),
    )
    graph = build_agent_graph(
        cfg(protocol="react"), model=model, tools=TOOLS, checkpointer=InMemorySaver()
    )
    state = graph.invoke({"messages": [("user", "1+2")]}, {"configurable": {"thread_id": "r"}})
    out = state["output"]
    assert out["success"] and out["result"] == "3"
    tool = next(s for s in out["reasoning"]["steps"] if s["kind"] == "tool")
    assert tool["thought"] == "I need the sum."
    assert tool["action"]["tool"] == "add" and tool["action"]["input"] == {"a": 1, "b": 2}
    assert CALLS == [("add", {"a": 1, "b": 2})]
    assert model.bound_tool_names == [["PlanDraft"]]  # no native tool binding for the steps
    second_prompt = model.prompts[2]
    assert "Action Input" in second_prompt[0].content and "- add:" in second_prompt[0].content
    assert second_prompt[-1].content == f"Observation: 3\n{OBSERVATION_NUDGE}"
    assert "Paris" not in second_prompt[0].content  # no example values to copy


@pytest.mark.parametrize(
    ("content", "tool", "args"),
    [
        ('Thought: t\nAction: add\nAction Input: {"a": 1}', "add", {"a": 1}),
        ('Thought: t\nAction: `add`\nAction Input: ```json\n{"a": 1}\n```', "add", {"a": 1}),
        ("Thought: t\nAction: add\nAction Input: 42", "add", {"input": "42"}),
        ('Action: add\nAction Input: {"s": "}{"} trailing', "add", {"s": "}{"}),
        (
            'Thought: t\nAction: add\nAction Input: {"a": 1}\nObservation: fake\nFinal Answer: x',
            "add",
            {"a": 1},
        ),
    ],
)
def test_parse_action(content: str, tool: str, args: dict[str, Any]) -> None:
    parsed = parse_response(content)
    assert (parsed.tool, parsed.tool_input, parsed.done) == (tool, args, False)


def test_parse_final_answer_json_and_text() -> None:
    assert parse_response('Thought: ok\nFinal Answer: {"x": 1}').result == {"x": 1}
    parsed = parse_response("Thought: ok\nFinal Answer: plain words")
    assert parsed.done and parsed.result == "plain words" and parsed.thought == "ok"


def test_parse_survives_malformed_output() -> None:
    parsed = parse_response("I just answer without the format.")
    assert parsed.done and parsed.malformed and parsed.result == "I just answer without the format."
    assert parse_response("").done
    assert extract_action_input('{"unclosed": ') == {"input": '{"unclosed":'}
