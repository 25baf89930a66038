"""The revise_plan node called directly: new remaining steps, completed ones kept."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from noema_graph.nodes.revise_plan import SPEC, revise_plan, revised
from noema_graph.state.models import PlanDraft, Reflection, RunInfo, TaskPlan, TaskStep
from noema_graph.state.outcome import Outcome
from tests.nodes.helpers import Path, deps, run, runtime, types
from tests.scripted import ScriptedChatModel, plan_reply, structured


def _plan() -> TaskPlan:
    steps = (TaskStep(description="a"), TaskStep(description="b"))
    return TaskPlan(goal="g", steps=steps).started().advance("done a")


def _state() -> dict[str, Any]:
    reflection = Reflection(
        progress="a done", remaining="b is impossible", decision="revise", reason="blocked"
    )
    return {
        "messages": [HumanMessage("g")],
        "plan": _plan(),
        "reflection": reflection,
        "replans": 1,
        "iteration": 4,
        "run": RunInfo(),
    }


def test_revised_plan_keeps_completed_steps() -> None:
    plan = _plan()
    new = revised(plan, PlanDraft(goal="g", steps=["c", "d"]))
    assert [(s.description, s.status) for s in new.steps] == [
        ("a", "completed"),
        ("c", "in_progress"),
        ("d", "pending"),
    ]
    assert new.current_step_index == 1 and new.steps[0].result == "done a"
    assert revised(plan, PlanDraft(goal="g", steps=[" "])) is plan


def test_the_planning_model_revises_from_the_reflection(scripted: Any, path: Path) -> None:
    planner = scripted(plan_reply("c", "d"))
    made = deps(ScriptedChatModel(script=[]), planning_model=planner)
    events: list[dict[str, Any]] = []
    update = run(revise_plan(_state(), runtime(events), made), path)
    assert [s.description for s in update["plan"].steps] == ["a", "c", "d"]
    assert update["replans"] == 2 and update["trace"][0].kind == "plan_revised"
    assert types(events) == ["plan_revised"] and events[0]["replans"] == 2
    system = planner.prompts[0][0].content
    assert "a: done a" in system and "b is impossible (blocked)" in system
    assert SPEC.outcome(update) == (Outcome.REPLAN, "plan revised")


def test_no_valid_revision_keeps_the_plan(scripted: Any, path: Path) -> None:
    bad = structured("PlanDraft", goal="g")
    update = run(revise_plan(_state(), runtime(), deps(scripted(bad, bad), plan_retries=2)), path)
    assert "plan" not in update and update["replans"] == 2
    assert (
        update["trace"][0].kind == "error"
        and "keeping the current one" in update["trace"][0].thought
    )
    assert update["usage"].model_calls == 2


def test_a_model_failure_is_recorded(path: Path) -> None:
    model = ScriptedChatModel(script=[OSError("no route to host")])
    update = run(revise_plan(_state(), runtime(), deps(model)), path)
    assert "no route to host" in update["llm_error"] and "plan" not in update
