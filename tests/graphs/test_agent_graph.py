"""Scripted end-to-end runs of the agent graph."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.graphs import build_agent_graph
from noema_graph.models.profile import CONTEXT_WINDOW_KEY
from noema_graph.state.output import AgentOutput
from tests.helpers import CALLS, TOOLS, cfg
from tests.scripted import call, plan_reply, reflection_reply, text, tools_reply

THREAD = {"configurable": {"thread_id": "t1"}}


def run(
    model: Any, config: Any = None, tools: Any = TOOLS, request: str = "do it"
) -> dict[str, Any]:
    graph = build_agent_graph(
        config or cfg(), model=model, tools=tools, checkpointer=InMemorySaver()
    )
    return graph.invoke({"messages": [("user", request)]}, THREAD)


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


def test_direct_answer(scripted: Any) -> None:
    model = scripted(plan_reply("Answer", goal="say hi"), text("hi there"))
    state = run(model)
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.result == "hi there" and out.error is None
    assert out.metadata.iterations == 1 and out.metadata.tools_used == []
    assert out.metadata.token_usage.total_tokens == 30  # plan + step, 15 each
    assert out.metadata.estimated_cost_usd == pytest.approx(2 * (10 * 1 + 5 * 2) / 1e6)
    assert out.metadata.model == "scripted"
    assert 0 < out.reasoning.confidence <= 1
    assert [s.kind for s in out.reasoning.steps] == ["plan", "thought", "final"]
    assert [s.step for s in out.reasoning.steps] == [1, 2, 3]


def test_multi_step_with_tools(scripted: Any) -> None:
    model = scripted(
        plan_reply("add numbers", "look it up"),
        tools_reply(call("add", {"a": 2, "b": 3}), content="I add first"),
        text("sum is 5"),
        tools_reply(call("lookup", {"key": "k"})),
        text("found value-of-k"),
        text("The sum is 5 and k is value-of-k."),
    )
    state = run(model, cfg(reflection_interval=10))
    out = state["output"]
    assert out["success"] and out["result"] == "The sum is 5 and k is value-of-k."
    assert out["metadata"]["tools_used"] == ["add", "lookup"]
    assert out["metadata"]["iterations"] == 4
    assert CALLS == [("add", {"a": 2, "b": 3}), ("lookup", {"key": "k"})]
    tool_steps = [s for s in out["reasoning"]["steps"] if s["kind"] == "tool"]
    assert tool_steps[0]["thought"] == "I add first"
    assert tool_steps[0]["action"] == {"tool": "add", "input": {"a": 2, "b": 3}, "output": "5"}
    assert tool_steps[0]["observation"] == "5"
    assert state["plan"].is_complete
    # the step prompt carried the current step and the results so far
    last_step_prompt = model.prompts[4][0].content
    assert "look it up" in last_step_prompt and "sum is 5" in last_step_prompt
    assert model.bound_tool_names[-1] == ["add", "lookup", "explode"]


def test_parallel_tool_calls_all_answered(scripted: Any) -> None:
    model = scripted(
        plan_reply("do"),
        tools_reply(
            call("add", {"a": 1, "b": 1}, "c1"),
            call("lookup", {"key": "x"}, "c2"),
            call("add", {"a": 2, "b": 2}, "c3"),
        ),
        text("done"),
    )
    state = run(model)
    answers = {m.tool_call_id: m.content for m in state["messages"] if isinstance(m, ToolMessage)}
    assert answers == {"c1": "2", "c2": "value-of-x", "c3": "4"}
    assert sorted(map(str, CALLS)) == sorted(
        map(str, [("add", {"a": 1, "b": 1}), ("lookup", {"key": "x"}), ("add", {"a": 2, "b": 2})])
    )


def test_calls_past_the_cap_are_queued_by_default(scripted: Any) -> None:
    calls = [call("add", {"a": i, "b": 0}, f"c{i}") for i in range(4)]
    model = scripted(plan_reply("do"), tools_reply(*calls), text("done"))
    state = run(model, cfg(max_tool_calls_per_step=2))
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert [answers[c].status for c in ("c0", "c1", "c2", "c3")] == ["success"] * 4
    assert len(CALLS) == 4
    ran = state["output"]["metadata"]["tool_calls"]
    assert [c["args"]["a"] for c in ran] == [0, 1, 2, 3]


def test_calls_past_the_cap_get_an_error_message_when_refused(scripted: Any) -> None:
    calls = [call("add", {"a": i, "b": 0}, f"c{i}") for i in range(4)]
    model = scripted(plan_reply("do"), tools_reply(*calls), text("done"))
    state = run(model, cfg(max_tool_calls_per_step=2, tool_call_overflow="refuse"))
    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert set(answers) == {"c0", "c1", "c2", "c3"}
    assert [answers[c].status for c in ("c0", "c1", "c2", "c3")] == [
        "success",
        "success",
        "error",
        "error",
    ]
    assert "at most 2 tool calls" in answers["c3"].content
    assert len(CALLS) == 2


def test_unknown_tool_is_a_hallucinated_action(scripted: Any) -> None:
    model = scripted(plan_reply("do"), tools_reply(call("nope", {}, "c1")), text("ok without it"))
    out = run(model)["output"]
    assert out["success"]
    kinds = [s["kind"] for s in out["reasoning"]["steps"]]
    assert "hallucinated_action" in kinds
    step = next(s for s in out["reasoning"]["steps"] if s["kind"] == "hallucinated_action")
    assert "Unknown tool 'nope'" in step["observation"] and "add" in step["observation"]
    assert out["metadata"]["tools_used"] == []


def test_tool_exception_becomes_an_observation(scripted: Any) -> None:
    model = scripted(
        plan_reply("do"),
        tools_reply(call("explode", {"reason": "x"}, "c1")),
        text("the tool failed, answering anyway"),
    )
    state = run(model)
    msg = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert msg.status == "error" and "RuntimeError: tool broke: x" in msg.content
    assert state["output"]["success"]
    assert state["output"]["reasoning"]["confidence"] < 1.0


def test_invalid_plan_falls_back_to_direct_answer(scripted: Any) -> None:
    model = scripted(text("not a plan"), plan_reply(), text("direct answer"))
    out = run(model, cfg(plan_retries=2))["output"]
    assert out["success"] and out["result"] == "direct answer"
    fallback = out["reasoning"]["steps"][0]
    assert fallback["kind"] == "plan_fallback"


def test_reflect_then_revise_keeps_completed_steps(scripted: Any) -> None:
    model = scripted(
        plan_reply("one", "two", "three"),
        text("one done"),
        reflection_reply("revise", "two is wrong"),
        plan_reply("better two"),
        text("better two done"),
        text("final"),
    )
    state = run(model, cfg(reflection_interval=1))
    plan = state["plan"]
    assert [s.description for s in plan.steps] == ["one", "better two"]
    assert plan.steps[0].result == "one done" and plan.is_complete
    assert state["replans"] == 1
    kinds = [s["kind"] for s in state["output"]["reasoning"]["steps"]]
    assert kinds == ["plan", "thought", "reflection", "plan_revised", "thought", "final"]
    assert state["output"]["metadata"]["replans"] == 1


def test_step_prompt_never_ends_with_an_assistant_message(scripted: Any) -> None:
    model = scripted(plan_reply("one", "two"), text("r1"), text("r2"), text("both"))
    run(model, cfg(reflection_interval=10))
    second_step = model.prompts[2]
    assert second_step[-1].type == "human"
    assert second_step[-1].content == "Now do step 2: two"


def test_plan_drops_repeated_and_blank_steps() -> None:
    from noema_graph.state.models import PlanDraft

    plan = PlanDraft(goal="g", steps=["a", "a", " ", "b", "a"]).to_plan(max_steps=8)
    assert [s.description for s in plan.steps] == ["a", "b"]
    assert plan.steps[0].status == "in_progress"
    assert len(PlanDraft(goal="g", steps=[str(i) for i in range(12)]).to_plan(3).steps) == 3


def test_subagent_usage_rolls_up_and_scope_carries_the_trace(scripted: Any) -> None:
    from langchain_core.tools import StructuredTool

    from noema_graph.context import RunContext, current_scope
    from noema_graph.tools.results import SUBAGENT_OUTPUT

    seen: list[Any] = []

    def consult(question: str) -> tuple[str, dict[str, Any]]:
        scope = current_scope()
        seen.append(scope)
        child = {
            "metadata": {
                "token_usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
                "estimated_cost_usd": 0.5,
            }
        }
        return "child says hi", {SUBAGENT_OUTPUT: child}

    tool = StructuredTool.from_function(
        consult,
        name="consult",
        description="Ask a subagent.",
        response_format="content_and_artifact",
    )
    model = scripted(
        plan_reply("ask"), tools_reply(call("consult", {"question": "q"})), text("done")
    )
    graph = build_agent_graph(cfg(), model=model, tools=[tool], checkpointer=InMemorySaver())
    state = graph.invoke(
        {"messages": [("user", "x")]},
        THREAD,
        context=RunContext(user_id="u1", trace_id="trace-123"),
    )
    meta = state["output"]["metadata"]
    assert meta["token_usage"]["total_tokens"] == 3 * 15 + 150
    assert meta["estimated_cost_usd"] == pytest.approx(0.5 + 3 * 20 / 1e6)
    assert meta["trace_id"] == "trace-123"
    assert seen[0].trace_id == "trace-123" and seen[0].context.user_id == "u1"


def test_long_observations_are_compacted_in_the_prompt_only(scripted: Any) -> None:
    @tool
    def dump() -> str:
        """Return a very long document."""
        return "lorem ipsum " * 3000

    model = scripted(
        plan_reply("read"),
        tools_reply(call("dump", {}, "d1")),
        text("short"),
        metadata={CONTEXT_WINDOW_KEY: 3000},
    )
    graph = build_agent_graph(cfg(), model=model, tools=[dump], checkpointer=InMemorySaver())
    events = list(
        graph.stream(
            {"messages": [("user", "read")]},
            {"configurable": {"thread_id": "c"}},
            stream_mode="custom",
        )
    )
    compaction = [e for e in events if e["type"] == "compaction"]
    assert compaction and compaction[0]["before_tokens"] > compaction[0]["after_tokens"]
    prompt = model.prompts[-1]
    sent = next(m for m in prompt if isinstance(m, ToolMessage))
    assert len(sent.content) < 10_000 and "characters truncated" in sent.content
    state = graph.get_state({"configurable": {"thread_id": "c"}}).values
    kept = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert len(kept.content) >= 36_000  # the state keeps the whole observation
    assert any(s.kind == "compaction" for s in state["trace"])


def test_every_tool_in_the_helpers_is_bound(scripted: Any) -> None:
    model = scripted(plan_reply("x"), text("y"))
    build_agent_graph(cfg(), model=model, tools=TOOLS).invoke({"messages": [("user", "q")]})
    assert model.bound_tool_names[-1] == [t.name for t in TOOLS]


def test_check_claims_flags_an_effect_no_tool_call_backs(scripted: Any) -> None:
    def replies() -> list[Any]:
        return [
            plan_reply("Add"),
            tools_reply(call("add", {"a": 1, "b": 2}, "c1")),
            text("The sum is 3. I also deleted the file notes.txt."),
        ]

    plain = run(scripted(*replies()), cfg(reflection_interval=10))["output"]
    checked = run(scripted(*replies()), cfg(reflection_interval=10, check_claims=True))
    out = checked["output"]
    flagged = [s for s in out["reasoning"]["steps"] if s["kind"] == "hallucinated_action"]
    assert len(flagged) == 1 and "notes.txt" in flagged[0]["thought"]
    assert out["reasoning"]["confidence"] < plain["reasoning"]["confidence"]
    assert [s.kind for s in checked["trace"]][-2:] == ["final", "hallucinated_action"]
    assert not any(s["kind"] == "hallucinated_action" for s in plain["reasoning"]["steps"])
    calls = [(c["tool"], c["args"]) for c in out["metadata"]["tool_calls"]]
    assert calls == [("add", {"a": 1, "b": 2})]  # a flagged claim is not a tool call
