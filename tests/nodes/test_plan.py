"""The plan node called directly: a new run, its plan, the fallbacks, recalled memory."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from noema_graph.context import RunContext
from noema_graph.memory import MemoryManager
from noema_graph.nodes.plan import FALLBACK_STEP, plan
from tests.helpers import cfg
from tests.nodes.helpers import Path, deps, run, runtime, types
from tests.scripted import ScriptedChatModel, plan_reply, structured


def test_plan_node_resets_the_run_and_emits_events(scripted: Any, path: Path) -> None:
    model = scripted(plan_reply("a", "b", goal="g"))
    events: list[dict[str, Any]] = []
    update = run(
        plan(
            {"messages": [HumanMessage("do a then b")], "iteration": 7},
            runtime(events, context=RunContext(trace_id="t-1")),
            deps(model),
        ),
        path,
    )
    assert update["iteration"] == 0 and update["replans"] == 0 and update["llm_error"] is None
    assert [s.description for s in update["plan"].steps] == ["a", "b"]
    assert update["plan"].steps[0].status == "in_progress"
    assert update["run"].trace_id == "t-1" and update["run"].request == "do a then b"
    assert types(events) == ["turn_start", "plan_created"]
    assert {e["run_id"] for e in events} == {update["run"].run_id}
    assert update["usage"].value.model_calls == 1  # an Overwrite: a new run starts from zero


def test_no_valid_plan_falls_back_to_answering_directly(scripted: Any, path: Path) -> None:
    bad = structured("PlanDraft", goal="no steps")
    model = scripted(bad, bad)
    events: list[dict[str, Any]] = []
    update = run(
        plan({"messages": [HumanMessage("hi")]}, runtime(events), deps(model, plan_retries=2)),
        path,
    )
    assert [s.description for s in update["plan"].steps] == [FALLBACK_STEP]
    (step,) = update["trace"].value
    assert step.kind == "plan_fallback" and "steps" in (step.observation or "")
    assert types(events) == ["turn_start", "warning", "plan_created"]
    assert events[1]["code"] == "plan_fallback" and events[2]["fallback"] is True
    assert update["usage"].value.model_calls == 2


def test_a_model_failure_answers_directly_and_records_the_error(path: Path) -> None:
    model = ScriptedChatModel(script=[OSError("connection refused by proxy")])
    events: list[dict[str, Any]] = []
    update = run(plan({"messages": [HumanMessage("hi")]}, runtime(events), deps(model)), path)
    assert "connection refused by proxy" in update["llm_error"]
    assert [s.description for s in update["plan"].steps] == [FALLBACK_STEP]
    assert update["trace"].value[0].kind == "error"
    assert types(events) == ["turn_start"]


def test_the_planning_model_plans(scripted: Any, path: Path) -> None:
    planner = scripted(plan_reply("x"))
    made = deps(ScriptedChatModel(script=[]), planning_model=planner)  # the main model: unused
    update = run(plan({"messages": [HumanMessage("q")]}, runtime(), made), path)
    assert [s.description for s in update["plan"].steps] == ["x"]
    assert len(planner.prompts) == 1


def test_recalled_memories_reach_the_planner(scripted: Any, path: Path) -> None:
    store, model = InMemoryStore(), scripted(plan_reply("answer"))
    made = deps(model)
    MemoryManager(store, user_id="ada", agent=cfg().name, embedder=made.embedder).store(
        "pet", "Ada's cat is called Turing", "fact", "persistent"
    )
    context = RunContext(user_id="ada")
    state = {"messages": [HumanMessage("What is my cat called?")]}
    update = run(plan(state, runtime(store=store, context=context), made), path)
    assert [m["key"] for m in update["memory_context"]] == ["pet"]
    prompt = model.prompts[0]
    assert "Relevant memories:" in prompt[0].content and "Turing" in prompt[0].content


def test_the_embedded_model_is_not_asked_to_plan(path: Path) -> None:
    """Its plans are noise: the plan is one step, the request, and no model call is made."""
    from noema_graph.models.profile import PROVIDER_KEY

    local = ScriptedChatModel(script=[], metadata={PROVIDER_KEY: "local"})  # never called
    request = "Use the add tool to add 2 and 3." + " Then some more words." * 20  # > 300
    update = run(plan({"messages": [HumanMessage(request)]}, runtime(), deps(local)), path)
    assert update["plan"].goal == request
    assert [s.description for s in update["plan"].steps] == [request]
    assert update["trace"].value[0].kind == "plan"
    assert update["usage"].value.model_calls == 0
    local.assert_complete()
