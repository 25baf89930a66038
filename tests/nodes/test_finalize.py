"""The finalize node called directly: the answer, the partial result, the run-end work."""

from __future__ import annotations

import sqlite3
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore
from pydantic import BaseModel

from noema_graph.context import RunContext
from noema_graph.nodes.common import preview
from noema_graph.nodes.finalize import SPEC, close_run, finalize
from noema_graph.state.models import (
    ReasoningStep,
    RunInfo,
    TaskPlan,
    TaskStep,
    ToolAction,
    ToolTime,
    Usage,
)
from noema_graph.state.outcome import Outcome
from tests.nodes.helpers import Path, deps, run, runtime, types
from tests.scripted import ScriptedChatModel, call, structured, text


class Answer(BaseModel):
    city: str


def _plan(*results: str, todo: int = 0) -> TaskPlan:
    steps = tuple(TaskStep(description=f"step {i}") for i in range(len(results) + todo))
    plan = TaskPlan(goal="g", steps=steps).started()
    for result in results:
        plan = plan.advance(result)
    return plan


def _state(plan: TaskPlan, **extra: Any) -> dict[str, Any]:
    usage = Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15, model_calls=1)
    return {
        "messages": [HumanMessage("where?")],
        "plan": plan,
        "run": RunInfo(request="where?"),
        "usage": usage,
        "iteration": 2,
        "trace": [],
        **extra,
    }


def test_the_model_writes_the_answer_from_the_results(scripted: Any, path: Path) -> None:
    model = scripted(text("Lima, then Cusco."))
    update = run(finalize(_state(_plan("Lima", "Cusco")), runtime(), deps(model)), path)
    output = update["output"]
    assert output["success"] is True and output["result"] == "Lima, then Cusco."
    assert output["metadata"]["token_usage"]["total_tokens"] == 30  # state + this call
    assert [m.text for m in update["messages"]] == ["Lima, then Cusco."]
    assert "step 0: Lima" in model.prompts[0][0].content
    assert SPEC.outcome(update) == (Outcome.SUCCESS, "finished")


def test_a_tool_step_result_is_shown_once_as_its_observation(scripted: Any, path: Path) -> None:
    data = ",".join(f'"city{i}":"Lima"' for i in range(40))
    observation = f'{{"status":"success","data":{{{data}}}}}'
    tool = ReasoningStep(
        kind="tool", action=ToolAction(tool="find", input={"q": "x"}), observation=observation
    )
    plan = _plan(preview(observation, 100), "the model's own note")
    model = scripted(text("Lima."))
    run(finalize(_state(plan, trace=[tool]), runtime(), deps(model)), path)
    system, ask = (m.content for m in model.prompts[0])
    assert "city0" not in system and "step 1: the model's own note" in system
    assert f"Observation: {{{data}}}" in ask  # in full, without the status wrapper


def test_a_single_step_result_is_the_answer_without_a_call(path: Path) -> None:
    update = run(finalize(_state(_plan("Lima")), runtime(), deps()), path)
    assert update["output"]["result"] == "Lima" and update["messages"] == []


def test_a_limit_ends_with_the_partial_result_and_no_call(path: Path) -> None:
    pending = AIMessage("", tool_calls=[call("add", {"a": 1, "b": 2}, "c1")])
    state = _state(
        _plan("Lima", todo=1),
        messages=[HumanMessage("where?"), pending],
        elapsed_s=3.0,
        tool_time=ToolTime(),
    )
    update = run(finalize(state, runtime(), deps(timeout_s=1.0)), path)
    output = update["output"]
    assert output["success"] is False and output["error"]["code"] == "timeout"
    assert output["result"] == "step 0: Lima"
    dangling, note = update["messages"]
    assert isinstance(dangling, ToolMessage) and dangling.tool_call_id == "c1"
    assert "Not executed: the run stopped (timeout)" in dangling.content
    assert note.text.startswith("[The wall-clock budget ran out")
    assert SPEC.outcome(update)[0] is not Outcome.SUCCESS


def test_a_model_failure_ends_with_llm_error_and_the_partial_result(path: Path) -> None:
    model = ScriptedChatModel(script=[OSError("gateway gone")])
    update = run(finalize(_state(_plan("Lima", "Cusco")), runtime(), deps(model)), path)
    output = update["output"]
    assert output["error"]["code"] == "llm_error" and "gateway gone" in update["llm_error"]
    assert output["result"] == "step 0: Lima\nstep 1: Cusco"


def test_an_output_schema_is_asked_for_and_validated(scripted: Any, path: Path) -> None:
    model = scripted(structured("Answer", city="Lima"))
    made = deps(model, output_schema=Answer)
    update = run(finalize(_state(_plan("Lima", "Cusco")), runtime(), made), path)
    assert update["output"]["result"] == {"city": "Lima"}
    assert update["output"]["validated"] is True


def test_close_run_remembers_then_announces(path: Path) -> None:
    store, events = InMemoryStore(), list[dict[str, Any]]()
    state = _state(_plan("Lima"))
    made = deps()
    rt = runtime(events, store=store, context=RunContext(user_id="ada"))
    update = run(finalize(state, rt, made), path)
    assert events == []  # finalize itself announces nothing: its post hooks run first
    run(close_run(state, update, rt, made), path)
    assert types(events) == ["content_chunk", "turn_end"] and events[0]["text"] == "Lima"
    stored = store.search(("memory", "persistent"))
    assert [i.value["value"] for i in stored] == ["where?\nLima"]


class BrokenStore(InMemoryStore):
    """A Store whose disk is gone."""

    def batch(self, ops: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")

    async def abatch(self, ops: Any) -> Any:
        raise sqlite3.OperationalError("disk I/O error")


def test_a_memory_failure_is_a_warning_not_a_failed_run(path: Path) -> None:
    events: list[dict[str, Any]] = []
    state, made = _state(_plan("Lima")), deps()
    rt = runtime(events, store=BrokenStore())
    update = run(finalize(state, rt, made), path)
    run(close_run(state, update, rt, made), path)
    assert types(events) == ["warning", "content_chunk", "turn_end"]
    assert "disk I/O error" in events[0]["message"] and events[2]["success"] is True
