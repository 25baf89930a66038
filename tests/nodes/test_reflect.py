"""The reflect node called directly: periodic or forced by a loop, and its fallbacks."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from noema_graph.nodes.reflect import SPEC, reflect
from noema_graph.state.models import ReasoningStep, RunInfo, TaskPlan, TaskStep, ToolAction
from noema_graph.state.outcome import Outcome
from tests.nodes.helpers import Path, deps, run, runtime, types
from tests.scripted import ScriptedChatModel, reflection_reply, structured


def _lookup(key: str) -> ReasoningStep:
    action = ToolAction(tool="lookup", input={"key": key}, output="v")
    return ReasoningStep(kind="tool", thought="", action=action, observation="v")


def _state(*trace: ReasoningStep, **extra: Any) -> dict[str, Any]:
    plan = TaskPlan(goal="find k", steps=(TaskStep(description="look k up"),)).started()
    return {
        "messages": [HumanMessage("find k")],
        "plan": plan,
        "run": RunInfo(),
        "trace": list(trace),
        "iteration": 3,
        **extra,
    }


def test_a_periodic_reflection_records_its_decision(scripted: Any, path: Path) -> None:
    model = scripted(reflection_reply("continue", "half done"))
    events: list[dict[str, Any]] = []
    update = run(reflect(_state(_lookup("a")), runtime(events), deps(model)), path)
    assert update["reflection"].decision == "continue"
    assert update["last_reflection_at"] == 3
    assert "loop_guard" not in update and "answer_only" not in update
    assert types(events) == ["reflection"] and events[0]["forced_by_loop"] is False
    assert "WARNING" not in model.prompts[0][0].content
    assert SPEC.outcome(update) == (Outcome.SUCCESS, "continue")


def test_a_loop_forces_a_reflection_with_a_warning(scripted: Any, path: Path) -> None:
    model = scripted(reflection_reply("revise", "stuck"))
    events: list[dict[str, Any]] = []
    state = _state(_lookup("k"), _lookup("k"), _lookup("k"))
    update = run(reflect(state, runtime(events), deps(model, loop_threshold=3)), path)
    assert 'same tool call lookup({"key": "k"}) was made 3 times' in model.prompts[0][0].content
    assert update["loop_guard"].streak == 3 and update["answer_only"] is True
    assert events[0]["forced_by_loop"] is True
    assert SPEC.outcome(update) == (Outcome.REPLAN, "stuck")


def test_no_valid_reflection_falls_back_to_a_safe_decision(scripted: Any, path: Path) -> None:
    bad = structured("Reflection", progress="p")  # no decision
    model = scripted(bad, bad, bad, bad)
    calm = run(reflect(_state(_lookup("a")), runtime(), deps(model, plan_retries=2)), path)
    looping = _state(_lookup("k"), _lookup("k"), _lookup("k"))
    forced = run(reflect(looping, runtime(), deps(model, plan_retries=2)), path)
    assert calm["reflection"].decision == "continue"
    assert forced["reflection"].decision == "revise"  # a loop must change something
    assert "no valid reflection" in calm["reflection"].reason


def test_a_model_failure_is_recorded(path: Path) -> None:
    model = ScriptedChatModel(script=[OSError("proxy down")])
    update = run(reflect(_state(), runtime(), deps(model)), path)
    assert "proxy down" in update["llm_error"] and update["trace"][0].kind == "error"
    assert "reflection" not in update and update["last_reflection_at"] == 3
    assert SPEC.outcome(update) == (Outcome.SKIP, "no reflection")
