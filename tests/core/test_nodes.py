"""Nodes called directly, with a hand-made Runtime, plus compaction inside a run."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime

from noema_graph.context import RunContext
from noema_graph.effects import adrive, drive
from noema_graph.graphs import build_agent_graph
from noema_graph.models.profile import CONTEXT_WINDOW_KEY
from noema_graph.nodes.deps import make_deps
from noema_graph.nodes.execute_step import dangling_answers, execute_step
from noema_graph.nodes.plan import plan
from noema_graph.nodes.revise_plan import revised
from noema_graph.nodes.routing import route_next
from noema_graph.state.models import PlanDraft, RunInfo, TaskPlan, TaskStep
from tests.core.helpers import TOOLS, cfg
from tests.scripted import call, plan_reply, text, tools_reply


def _runtime(events: list[dict[str, Any]], context: RunContext | None = None) -> Runtime[Any]:
    return Runtime(context=context, store=None, stream_writer=events.append)


def test_plan_node_resets_the_run_and_emits_events(scripted: Any) -> None:
    model = scripted(plan_reply("a", "b", goal="g"))
    events: list[dict[str, Any]] = []
    update = drive(
        plan(
            {"messages": [HumanMessage("do a then b")], "iteration": 7},
            _runtime(events, RunContext(trace_id="t-1")),
            make_deps(cfg(), model=model),
        )
    )
    assert update["iteration"] == 0 and update["replans"] == 0 and update["llm_error"] is None
    assert [s.description for s in update["plan"].steps] == ["a", "b"]
    assert update["run"].trace_id == "t-1" and update["run"].request == "do a then b"
    assert [e["type"] for e in events] == ["turn_start", "plan_created"]


def test_execute_step_is_not_entered_when_a_reflection_is_due() -> None:
    state = {
        "messages": [HumanMessage("x")],
        "iteration": 3,
        "last_reflection_at": 0,
        "plan": TaskPlan(goal="g", steps=(TaskStep(description="s"),)),
        "run": RunInfo(),
    }
    assert route_next(state, cfg()) == "reflect"


def test_a_cancelled_run_goes_to_finalize_without_the_model() -> None:
    import threading

    abort = threading.Event()
    abort.set()
    state = {"messages": [HumanMessage("x")]}
    assert route_next(state, cfg(), RunContext(abort=abort)) == "finalize"


def test_execute_step_answers_a_step_driven_sync_and_async(scripted: Any) -> None:
    import asyncio

    state = {
        "messages": [HumanMessage("x")],
        "plan": TaskPlan(goal="g", steps=(TaskStep(description="s"),)).started(),
        "run": RunInfo(),
    }
    sync = drive(execute_step(state, _runtime([]), make_deps(cfg(), model=scripted(text("r")))))
    deps = make_deps(cfg(), model=scripted(text("r")))
    async_ = asyncio.run(adrive(execute_step(state, _runtime([]), deps)))
    assert sync["plan"].steps[0].result == async_["plan"].steps[0].result == "r"
    assert sync["iteration"] == async_["iteration"] == 1


def test_dangling_answers_cover_unanswered_calls() -> None:
    ai = AIMessage(
        content="",
        tool_calls=[{"name": "a", "args": {}, "id": "1"}, {"name": "b", "args": {}, "id": "2"}],
    )
    answers = dangling_answers({"messages": [ai, ToolMessage("ok", tool_call_id="1")]})
    assert [(m.tool_call_id, m.status) for m in answers] == [("2", "error")]


def test_revised_plan_keeps_completed_steps() -> None:
    plan_ = TaskPlan(
        goal="g", steps=(TaskStep(description="a"), TaskStep(description="b"))
    ).started()
    plan_ = plan_.advance("done a")
    new = revised(plan_, PlanDraft(goal="g", steps=["c", "d"]))
    assert [(s.description, s.status) for s in new.steps] == [
        ("a", "completed"),
        ("c", "in_progress"),
        ("d", "pending"),
    ]
    assert new.current_step_index == 1 and new.steps[0].result == "done a"
    assert revised(plan_, PlanDraft(goal="g", steps=[" "])) is plan_


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
