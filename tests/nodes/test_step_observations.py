"""The ReAct step prompt: each result once, trimmed to what the step's call reads, and a
stable prefix (tools, reply form, rules) that holds nothing of the request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel

from noema_graph.nodes import llm
from noema_graph.nodes.common import tools_text
from noema_graph.nodes.execute_step import build_prompt, execute_step, step_prefix
from noema_graph.nodes.step_observations import (
    TEXT_CHARS,
    argument_keys,
    cut_mark,
    source_keys,
    trimmed,
)
from noema_graph.prompts import REACT_SHOWN
from noema_graph.state.models import RunInfo, TaskPlan, TaskStep
from tests.nodes.helpers import Path, deps, run, runtime
from tests.scripted import text


class Note(BaseModel):
    """A note to write."""

    front: str
    back: str


@tool
def find_notes(query: str) -> dict[str, Any]:
    """Find notes by their words."""
    return {"hits": [], "query": query}


@tool
def write_notes(shelf_id: int, notes: list[Note]) -> dict[str, Any]:
    """Write notes onto a shelf."""
    return {"note_ids": list(range(len(notes))), "shelf_id": shelf_id}


TOOLS: list[BaseTool] = [find_notes, write_notes]
LONG = "a long answer " * 40
HIT = {
    "note": {"id": 7, "shelf_id": 3, "front": "Q-seven", "back": LONG, "created_at": "T0"},
    "score": 0.93,
    "tags": ["kept-out"],
}
RESULT = json.dumps({"status": "success", "data": {"hits": [HIT]}}, separators=(",", ":"))


def _state(request: str = "Write a note about stars onto shelf 3.") -> dict[str, Any]:
    steps = (TaskStep(description="Find the notes."), TaskStep(description="Write the notes."))
    plan = TaskPlan(goal=request, steps=steps).started().advance(RESULT[:600])
    call = {"name": "find_notes", "args": {"query": "stars"}, "id": "c1"}
    messages = [
        HumanMessage(request),
        AIMessage("Looking.", tool_calls=[call]),
        ToolMessage(RESULT, tool_call_id="c1", name="find_notes"),
    ]
    return {"messages": messages, "plan": plan, "trace": [], "run": RunInfo()}


def _prompt(state: dict[str, Any], tools: list[BaseTool]) -> list[BaseMessage]:
    made = deps(name="notes", instructions="You keep notes.", protocol="react", tools=TOOLS)
    return build_prompt(state, made, tools, [])  # type: ignore[arg-type]


def test_a_result_is_shown_once_trimmed_to_what_the_steps_call_reads() -> None:
    prompt = _prompt(_state(), [write_notes])
    system, observation = prompt[0].text, prompt[-1].text
    assert f"- Find the notes.: {REACT_SHOWN}" in system and "Q-seven" not in system
    assert sum(m.text.count("Q-seven") for m in prompt) == 1
    shown = json.loads(observation.removeprefix("Observation: ").partition("\n")[0])
    note = shown["data"]["hits"][0]["note"]
    # ids and names, and write_notes' own argument keys (front, back; shelf_id): kept
    assert set(note) == {"id", "shelf_id", "front", "back"} and shown["status"] == "success"
    assert set(shown["data"]["hits"][0]) == {"note"}  # score and tags: nothing reads them
    assert note["back"].endswith(cut_mark(len(LONG) - len(LONG[:TEXT_CHARS].rstrip())))
    assert len(note["back"]) < len(LONG)
    assert RESULT in _state()["messages"][-1].text  # the state keeps the whole result


def test_a_step_without_tools_reads_the_whole_result() -> None:
    (observation,) = [m.text for m in _prompt(_state(), []) if m.text.startswith("Observation")]
    assert RESULT in observation


def test_a_result_the_conversation_does_not_hold_is_shown_in_full() -> None:
    state = _state()
    state["messages"] = state["messages"][:1]
    assert f"- Find the notes.: {RESULT[:600]}" in _prompt(state, [write_notes])[0].text


@pytest.mark.parametrize(
    ("observation", "keep"),
    [
        ('{"status":"error","message":"no such shelf","data":{"created_at":"T"}}', {"front"}),
        ("plain text with created_at in it", {"front"}),
        (RESULT, None),  # no tool offered: the step's answer is written from the result
    ],
)
def test_failures_texts_and_answer_steps_are_not_trimmed(
    observation: str, keep: set[str] | None
) -> None:
    assert trimmed(observation, None if keep is None else frozenset(keep)) == observation


def test_a_result_of_which_nothing_is_read_shows_every_field_its_long_texts_cut() -> None:
    shown = json.loads(trimmed(json.dumps({"count": 2, "text": LONG}), frozenset({"front"})))
    assert shown["count"] == 2 and shown["text"].endswith("characters not shown]")


def test_the_keys_kept_are_arguments_nested_ones_included_and_the_plans_sources() -> None:
    assert {"shelf_id", "notes", "front", "back"} <= argument_keys([write_notes])
    steps = [TaskStep(description="s", sources={"a": "make:ids.#", "b": "request"})]
    assert source_keys(steps) == {"ids"}


def test_the_prefix_holds_the_rules_and_tools_and_nothing_of_the_request() -> None:
    made = deps(name="notes", instructions="You keep notes.", protocol="react", tools=TOOLS)
    one = _prompt(_state("Write a note about stars onto shelf 3."), [write_notes])
    other = _prompt(_state("Put a card on comets on shelf 8, I am zed."), [write_notes])
    prefix = step_prefix(one, made, [write_notes])
    assert prefix is not None and prefix == step_prefix(other, made, [write_notes])
    assert one[0].text.startswith(prefix) and other[0].text.startswith(prefix)
    assert tools_text([write_notes]) in prefix and "Reply in one of two forms" in prefix
    assert prefix.endswith("never call a tool again on its own result.")
    assert "Goal" not in prefix and "stars" not in prefix and "Results" not in prefix


def test_every_request_of_a_step_is_sent_the_same_saved_prefix(
    scripted: Any, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    class Slot:
        def ensure(self, prefix: str) -> str:
            asked.append(prefix)
            return "current"

    def slot_of(_runnable: object) -> Slot:
        return Slot()

    monkeypatch.setattr(llm, "prefix_cache_of", slot_of)
    prompts: list[list[BaseMessage]] = []
    for request in ("Write a note about stars onto shelf 3.", "Put comets on shelf 8."):
        model = scripted(text("Thought: done\nFinal Answer: written"))
        made = deps(model, name="notes", instructions="Keep notes.", protocol="react", tools=TOOLS)
        run(execute_step(_state(request), runtime(), made), path)  # type: ignore[arg-type]
        prompts += model.prompts
    assert len(asked) == 2 and asked[0] == asked[1]
    assert all(p[0].text.startswith(asked[0]) for p in prompts)
    assert "stars" not in asked[0] and "comets" not in asked[0]


def test_the_pattern_picked_by_the_request_comes_after_the_prefix() -> None:
    @tool
    def search(query: str) -> str:
        """Look facts up."""
        return query

    made = deps(name="notes", instructions="You keep notes.", protocol="react", tools=[search])
    one = _prompt(_state("Look up the Kestrel budget"), [search])
    other = _prompt(_state("Look up the greenhouse"), [search])
    prefix = step_prefix(one, made, [search])
    assert prefix is not None and prefix == step_prefix(other, made, [search])
    assert "Kestrel" in one[0].text and "Kestrel" not in prefix
