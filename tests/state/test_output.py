"""The output contract: schema validation, confidence, multi-turn threads."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from noema_graph.errors import ConfigurationError
from noema_graph.graphs import build_agent_graph
from noema_graph.nodes.finalize import validate_result
from noema_graph.nodes.output import confidence, tools_used
from noema_graph.prompts import PROMPTS, PromptTemplate
from noema_graph.state.models import ReasoningStep, ToolAction
from noema_graph.state.output import AgentOutput
from tests.helpers import TOOLS, cfg
from tests.scripted import plan_reply, structured, text


class Pick(BaseModel):
    card_id: str
    expected_recall: float = Field(ge=0, le=1)


def _run(model: Any, config: Any, thread: str = "o") -> dict[str, Any]:
    graph = build_agent_graph(config, model=model, tools=TOOLS, checkpointer=InMemorySaver())
    return graph.invoke({"messages": [("user", "pick")]}, {"configurable": {"thread_id": thread}})


def test_output_schema_valid(scripted: Any) -> None:
    model = scripted(
        plan_reply("pick"), text("card c1"), structured("Pick", card_id="c1", expected_recall=0.8)
    )
    out = AgentOutput.model_validate(_run(model, cfg(output_schema=Pick))["output"])
    assert out.success and out.validated is True
    assert out.result == {"card_id": "c1", "expected_recall": 0.8}


def test_output_schema_invalid_returns_raw_content(scripted: Any) -> None:
    model = scripted(
        plan_reply("pick"),
        text("card c1"),
        structured("Pick", card_id="c1", expected_recall=7),
        structured("Pick", card_id="c1", expected_recall=9),
    )
    out = _run(model, cfg(output_schema=Pick))["output"]
    assert not out["success"] and out["validated"] is False
    assert out["error"]["code"] == "unvalidated" and out["outcome"] == "partial"
    assert out["result"] == "card c1"  # the raw content, never a crash
    assert out["reasoning"]["confidence"] <= 0.8


def test_validate_result_forms() -> None:
    assert validate_result('{"card_id": "a", "expected_recall": 0.5}', Pick)[1] is True
    assert validate_result({"card_id": "a"}, Pick) == ({"card_id": "a"}, False)
    assert validate_result("anything", None) == ("anything", None)
    assert validate_result(Pick(card_id="a", expected_recall=0.1), Pick)[1] is True


def test_second_turn_on_the_same_thread_starts_a_fresh_run(scripted: Any) -> None:
    model = scripted(plan_reply("a"), text("first"), plan_reply("b"), text("second"))
    graph = build_agent_graph(cfg(), model=model, tools=TOOLS, checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "multi"}}
    first = graph.invoke({"messages": [("user", "one")]}, thread)
    second = graph.invoke({"messages": [("user", "two")]}, thread)
    assert first["output"]["result"] == "first" and second["output"]["result"] == "second"
    assert second["iteration"] == 1
    assert [s["kind"] for s in second["output"]["reasoning"]["steps"]] == [
        "plan",
        "thought",
        "final",
    ]
    assert second["output"]["metadata"]["token_usage"]["total_tokens"] == 30
    assert first["run"].run_id != second["run"].run_id
    # the second plan saw the first exchange
    assert any(getattr(m, "content", "") == "first" for m in model.prompts[2])


def _step(kind: str = "tool", status: str = "ok") -> ReasoningStep:
    return ReasoningStep(kind=kind, status=status, action=ToolAction(tool="t"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("trace", "kwargs", "expected"),
    [
        ([], {"iterations": 0}, 1.0),
        ([], {"iterations": 5}, 0.85),
        ([_step(), _step(status="error")], {"iterations": 0}, 0.85),
        ([], {"iterations": 0, "replans": 3}, 0.8),
        ([_step("hallucinated_action")], {"iterations": 0}, 0.95),
        ([_step("plan_fallback")], {"iterations": 0}, 0.9),
        ([], {"iterations": 0, "validated": False}, 0.8),
        ([], {"iterations": 10, "stopped": True}, 0.35),
    ],
)
def test_confidence_formula(
    trace: list[ReasoningStep], kwargs: dict[str, Any], expected: float
) -> None:
    args = {"max_iterations": 10, "replans": 0, "stopped": False, "validated": None, **kwargs}
    assert confidence(trace, **args) == pytest.approx(expected)


def test_tools_used_in_order_of_first_use() -> None:
    steps = [ReasoningStep(kind="tool", action=ToolAction(tool=n)) for n in ("b", "a", "b")]
    steps.append(ReasoningStep(kind="hallucinated_action", action=ToolAction(tool="ghost")))
    assert tools_used(steps) == ["b", "a"]


def test_prompts_render_and_fail_on_missing_variables() -> None:
    for template in PROMPTS.values():
        values = {v: f"<{v}>" for v in template.variables}
        rendered = template.render(**values)
        assert all(f"<{v}>" in rendered for v in template.variables)
    with pytest.raises(ConfigurationError, match="missing variables"):
        PromptTemplate("t", "1", "hello ${name}").render()


def _tool(status: str) -> ReasoningStep:
    return ReasoningStep(kind="tool", status=status, action=ToolAction(tool="add", input={}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("result", "validated", "trace", "overrides", "expected"),
    [
        ({"card_id": "a"}, True, [_tool("ok")], {}, None),
        ("", None, [], {"output_schema": None}, "empty_result"),
        (None, None, [], {"output_schema": None}, "empty_result"),
        ("an answer", None, [_tool("error")], {"output_schema": None}, None),
        ({"card_id": "a"}, False, [_tool("ok")], {}, "unvalidated"),
        ({"card_id": "a"}, True, [_tool("error"), _tool("error")], {}, "tools_failed"),
        ({"card_id": "a"}, True, [], {}, None),  # answered without needing a tool
        ({"card_id": "a"}, True, [_tool("ok")], {"answer_after_tool_results": 2}, "ungrounded"),
    ],
)
def test_success_is_earned(
    result: Any,
    validated: bool | None,
    trace: list[ReasoningStep],
    overrides: dict[str, Any],
    expected: str | None,
) -> None:
    from noema_graph.nodes.output import build_output, unearned

    config = cfg(**{"output_schema": Pick, **overrides})
    assert unearned(result, validated, trace, config) == expected
    out = build_output({"trace": trace}, config, result=result, validated=validated, reason=None)
    assert out.success is (expected is None)
    assert (out.error.code if out.error else None) == expected
    if expected is not None:
        assert out.outcome == "partial" and out.metadata.stop_reason is None
        assert out.reasoning.confidence <= 0.5  # confidence follows
