"""The execute_step node called directly: one ReAct turn, its failures, its prompt."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from noema_graph.context import RunContext
from noema_graph.errors import TransientModelError
from noema_graph.models.profile import CONTEXT_WINDOW_KEY
from noema_graph.nodes.execute_step import (
    ANSWER_ONLY_NOTE,
    INTERRUPTED,
    SPEC,
    dangling_answers,
    execute_step,
)
from noema_graph.state.models import RunInfo, TaskPlan, TaskStep
from noema_graph.state.outcome import Outcome
from tests.helpers import TOOLS
from tests.nodes.helpers import Path, deps, run, runtime, types
from tests.scripted import ScriptedChatModel, call, text, tools_reply


def _state(**extra: Any) -> dict[str, Any]:
    plan = TaskPlan(goal="g", steps=(TaskStep(description="s"),)).started()
    return {"messages": [HumanMessage("x")], "plan": plan, "run": RunInfo(), **extra}


def test_execute_step_answers_a_step_driven_sync_and_async(scripted: Any) -> None:
    sync = run(execute_step(_state(), runtime(), deps(scripted(text("r")))), "sync")
    async_ = run(execute_step(_state(), runtime(), deps(scripted(text("r")))), "async")
    assert sync["plan"].steps[0].result == async_["plan"].steps[0].result == "r"
    assert sync["iteration"] == async_["iteration"] == 1
    assert SPEC.outcome(sync) == (Outcome.SUCCESS, "step answered")


def test_tool_calls_come_back_with_the_tools_bound(scripted: Any, path: Path) -> None:
    model = scripted(tools_reply(call("add", {"a": 1, "b": 2}, "c1"), content="adding"))
    events: list[dict[str, Any]] = []
    update = run(execute_step(_state(), runtime(events), deps(model, tools=TOOLS)), path)
    (message,) = update["messages"]
    assert [c["id"] for c in message.tool_calls] == ["c1"]
    assert "plan" not in update  # the step is not done until the model answers it
    # nothing to add or reset: no trace or answer_only write (each write is a checkpoint row)
    assert "trace" not in update and "answer_only" not in update
    assert model.bound_tool_names == [[t.name for t in TOOLS]]
    assert types(events) == ["thinking"] and events[0]["text"] == "adding"
    assert SPEC.outcome(update) == (Outcome.LOOP_BACK, "tool calls: 1")


def test_a_model_failure_is_recorded_not_raised(path: Path) -> None:
    model = ScriptedChatModel(script=[OSError("TLS handshake failed")])
    events: list[dict[str, Any]] = []
    update = run(execute_step(_state(), runtime(events), deps(model)), path)
    assert "TLS handshake failed" in update["llm_error"]
    assert update["trace"][0].kind == "error" and types(events) == ["error"]
    assert SPEC.outcome(update)[0] is Outcome.ERROR


def test_a_transient_failure_is_left_to_langgraphs_retry(path: Path) -> None:
    model = ScriptedChatModel(script=[TimeoutError("slow upstream")])
    with pytest.raises(TransientModelError):
        run(execute_step(_state(), runtime(attempt=1), deps(model)), path)


def test_an_abort_during_the_call_ends_the_turn_cancelled(path: Path) -> None:
    abort = threading.Event()

    def slow(_: list[BaseMessage]) -> AIMessage:
        abort.set()  # the caller aborts while the model is still answering
        time.sleep(0.5)  # short: asyncio.run waits for this executor thread before returning
        return AIMessage("too late")

    model = ScriptedChatModel(script=[slow])
    update = run(
        execute_step(_state(), runtime(context=RunContext(abort=abort)), deps(model)), path
    )
    assert update["cancelled"] is True and "plan" not in update and "iteration" not in update
    assert SPEC.outcome(update) == (Outcome.TERMINATE, "cancelled")


def test_an_answer_only_turn_offers_no_tools(scripted: Any, path: Path) -> None:
    model = scripted(text("the answer"))
    update = run(execute_step(_state(answer_only=True), runtime(), deps(model, tools=TOOLS)), path)
    assert update["answer_only"] is False  # reset once answered
    assert model.bound_tool_names == []
    assert ANSWER_ONLY_NOTE.strip() in model.prompts[0][0].content


def test_dangling_answers_cover_unanswered_calls() -> None:
    ai = AIMessage(
        content="",
        tool_calls=[{"name": "a", "args": {}, "id": "1"}, {"name": "b", "args": {}, "id": "2"}],
    )
    answers = dangling_answers({"messages": [ai, ToolMessage("ok", tool_call_id="1")]})
    assert [(m.tool_call_id, m.status) for m in answers] == [("2", "error")]


def test_a_call_left_unanswered_by_a_crash_is_answered_first(scripted: Any, path: Path) -> None:
    crashed = AIMessage("", tool_calls=[call("add", {"a": 1, "b": 1}, "lost")])
    model = scripted(text("r"))
    state = _state(messages=[HumanMessage("x"), crashed])
    update = run(execute_step(state, runtime(), deps(model, tools=TOOLS)), path)
    answer, reply = update["messages"]
    assert isinstance(answer, ToolMessage) and answer.tool_call_id == "lost"
    assert answer.content == INTERRUPTED and reply.text == "r"
    assert any(isinstance(m, ToolMessage) and m.tool_call_id == "lost" for m in model.prompts[0])


def test_a_long_observation_is_compacted_in_the_prompt_only(scripted: Any, path: Path) -> None:
    long = ToolMessage("lorem ipsum " * 3000, tool_call_id="d1", name="dump")
    asked = AIMessage("", tool_calls=[call("dump", {}, "d1")])
    model = scripted(text("short"), metadata={CONTEXT_WINDOW_KEY: 3000})
    events: list[dict[str, Any]] = []
    state = _state(messages=[HumanMessage("read"), asked, long])
    update = run(execute_step(state, runtime(events), deps(model)), path)
    sent = next(m for m in model.prompts[0] if isinstance(m, ToolMessage))
    assert len(sent.content) < 10_000 and "characters truncated" in sent.content
    assert [m.text for m in update["messages"]] == ["short"]  # state keeps the long one as is
    assert [s.kind for s in update["trace"]] == ["compaction", "thought"]
    (compaction,) = [e for e in events if e["type"] == "compaction"]
    assert compaction["before_tokens"] > compaction["after_tokens"]


@pytest.mark.parametrize(
    ("answer", "result"),
    [
        ("You did well. You did well. You did well. You did well.", "You did well."),
        # JSON repeats its keys by design: cut, it would no longer parse
        ('{"a": [{"k": 1, "v": 2}, {"k": 1, "v": 2}, {"k": 1, "v": 2}', None),
    ],
)
def test_a_react_answer_loses_its_loop_unless_it_is_json(
    scripted: Any, path: Path, answer: str, result: str | None
) -> None:
    model = scripted(text(f"Thought: t\nFinal Answer: {answer}"))
    update = run(execute_step(_state(), runtime(), deps(model, protocol="react")), path)
    assert update["plan"].steps[0].result == (result or answer)


def test_the_react_prompt_shows_the_pattern_the_users_request_asks_for() -> None:
    from langchain_core.tools import tool

    from noema_graph.nodes.execute_step import build_prompt

    @tool
    def python_executor(code: str) -> str:
        """Run code."""
        return code

    @tool
    def search(query: str) -> str:
        """Look facts up."""
        return query

    tools = [python_executor, search]
    react = deps(protocol="react", tools=tools)

    def system(request: str, *later: BaseMessage) -> str:
        plan = TaskPlan(goal="g", steps=(TaskStep(description="add 2 and 3"),)).started()
        state = _state(messages=[HumanMessage(request), *later], plan=plan)
        return build_prompt(state, react, tools, [])[0].text  # type: ignore[arg-type]

    assert "Action: python_executor" in system("What is 17 times 23?")
    assert "Action: search" in system("Look up the Kestrel budget")
    # after an answered step, "Now do step 1: add 2 and 3" is the last human turn: the
    # pattern still follows the user's request, not that turn
    assert "Action: search" in system("Look up the Kestrel budget", AIMessage("done"))


def test_the_step_model_is_bound_once_per_list_of_tools() -> None:
    from langchain_core.tools import tool

    from noema_graph.nodes.deps import BOUND_MODELS

    model = ScriptedChatModel(script=[])
    native = deps(model, tools=TOOLS)
    first = native.step_model(list(TOOLS))
    assert native.step_model(list(TOOLS)) is first  # a new list of the same tools
    assert model.bound_tool_names == [[t.name for t in TOOLS]]

    @tool("add")
    def add_again(a: int, b: int) -> int:
        """Add two numbers (the same name, a new object: a reopened MCP session's tool)."""
        return a + b

    native.step_model([add_again])
    assert model.bound_tool_names[-1] == ["add"] and len(model.bound_tool_names) == 2
    for _ in range(BOUND_MODELS + 2):  # fresh tool objects each time: the cache stays bounded
        native.step_model([add_again.model_copy()])
    assert len(native._bound) == BOUND_MODELS  # pyright: ignore[reportPrivateUsage]
    react = deps(model, tools=TOOLS, protocol="react")
    assert react.step_model(list(TOOLS)) is react.step_model(list(TOOLS))
