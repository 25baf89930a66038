"""Human in the loop: clarify and confirm with interrupt() and Command(resume=...)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command, interrupt

from noema_graph import approve, edit, pending, reject, resume_with, sqlite_checkpointer
from noema_graph.errors import HumanInputError
from noema_graph.graphs import build_agent_graph
from noema_graph.hitl import ClarifyRequest, ConfirmRequest
from noema_graph.storage.ledger import entries
from tests.helpers import CALLS, TOOLS, cfg
from tests.scripted import call, plan_reply, text, tools_reply

THREAD: Any = {"configurable": {"thread_id": "h1"}}


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


def _graph(model: Any, tools: Any = TOOLS, saver: Any = None, **config: Any) -> Any:
    return build_agent_graph(
        cfg(reflection_interval=10, **config),
        model=model,
        tools=tools,
        checkpointer=saver or InMemorySaver(),
    )


def _start(graph: Any, request: str = "do it") -> dict[str, Any]:
    return graph.invoke({"messages": [("user", request)]}, THREAD)


def _last_prompt_text(model: Any) -> str:
    return "\n".join(str(m.content) for m in model.prompts[-1])


# --- clarify -----------------------------------------------------------------------------


def test_clarify_pauses_with_the_question_and_the_answer_enters_the_trace(scripted: Any) -> None:
    model = scripted(
        plan_reply("Pick the deck"),
        tools_reply(call("ask_user", {"question": "Which deck?"}, "q1")),
        text("Studying the Spanish deck."),
    )
    graph = _graph(model, clarify=True)
    state = _start(graph)
    assert not state.get("output") and state["__interrupt__"]
    [open_request] = pending(graph, THREAD)
    assert open_request.request == ClarifyRequest(call_id="q1", question="Which deck?")
    assert "ask_user" in model.bound_tool_names[-1]

    out = graph.invoke(resume_with(graph, THREAD, "Spanish, please"), THREAD)["output"]
    assert out["success"] and out["result"] == "Studying the Spanish deck."
    assert out["outcome"] == "success" and pending(graph, THREAD) == []
    step = next(s for s in out["reasoning"]["steps"] if s["kind"] == "clarification")
    assert step["thought"] == "Which deck?" and step["observation"] == "Spanish, please"
    answer = graph.get_state(THREAD).values["messages"][-2]
    assert isinstance(answer, ToolMessage) and answer.content == "Spanish, please"
    assert "Spanish, please" in _last_prompt_text(model)


def test_a_pause_is_announced_on_the_custom_stream(scripted: Any) -> None:
    model = scripted(plan_reply("Add"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")), text("3"))
    graph = _graph(model, confirm_tools=("add",))
    events = list(graph.stream({"messages": [("user", "add")]}, THREAD, stream_mode="custom"))
    [asked] = [e for e in events if e["type"] == "human_input_requested"]
    assert asked["kind"] == "confirm" and asked["request"]["calls"][0]["id"] == "c1"
    graph.invoke(resume_with(graph, THREAD, "approve"), THREAD)


def test_clarify_is_not_offered_unless_enabled(scripted: Any) -> None:
    model = scripted(plan_reply("Answer"), text("done"))
    out = _start(_graph(model))["output"]
    assert out["success"] and "ask_user" not in model.bound_tool_names[-1]


def test_clarify_resumes_in_another_process(scripted: Any, tmp_path: Path) -> None:
    db = tmp_path / "hitl.sqlite"
    first = subprocess.run(
        [sys.executable, "-m", "tests.hitl_agent", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    assert "paused: Which deck?" in first.stdout
    model = scripted(text("Studying French."))  # the new process only needs the next turn
    with sqlite_checkpointer(db) as saver:
        graph = _graph(model, saver=saver, clarify=True)
        config: Any = {"configurable": {"thread_id": "cross"}}
        [open_request] = pending(graph, config)
        assert isinstance(open_request.request, ClarifyRequest)
        out = graph.invoke(resume_with(graph, config, "French"), config)["output"]
    assert out["success"] and out["result"] == "Studying French."
    kinds = [s["kind"] for s in out["reasoning"]["steps"]]
    assert kinds == ["plan", "clarification", "thought", "final"]


# --- confirm -------------------------------------------------------------------------------


def _pending_calls(graph: Any) -> ConfirmRequest:
    [open_request] = pending(graph, THREAD)
    assert isinstance(open_request.request, ConfirmRequest)
    return open_request.request


def test_confirm_pauses_with_the_exact_call_and_approve_runs_it(scripted: Any) -> None:
    model = scripted(plan_reply("Add"), tools_reply(call("add", {"a": 2, "b": 3}, "c1")), text("5"))
    graph = _graph(model, confirm_tools=("add",))
    _start(graph)
    request = _pending_calls(graph)
    assert [(c.id, c.name, c.args) for c in request.calls] == [("c1", "add", {"a": 2, "b": 3})]
    assert "confirm_tools" in request.calls[0].reason and CALLS == []

    out = graph.invoke(resume_with(graph, THREAD, approve()), THREAD)["output"]
    assert CALLS == [("add", {"a": 2, "b": 3})] and out["success"]
    approval = next(s for s in out["reasoning"]["steps"] if s["kind"] == "approval")
    assert approval["observation"] == "approved by the user"


def test_reject_becomes_an_observation_and_the_tool_does_not_run(scripted: Any) -> None:
    model = scripted(
        plan_reply("Add"),
        tools_reply(call("add", {"a": 2, "b": 3}, "c1")),
        text("I did not add, as asked."),
    )
    graph = _graph(model, confirm_tools=("add",))
    _start(graph)
    out = graph.invoke(resume_with(graph, THREAD, reject("not today")), THREAD)["output"]
    assert CALLS == [] and out["success"]
    answer = graph.get_state(THREAD).values["messages"][-2]
    assert isinstance(answer, ToolMessage) and answer.status == "error"
    assert "rejected" in str(answer.content) and "not today" in str(answer.content)
    assert "not today" in _last_prompt_text(model)
    assert out["metadata"]["tools_used"] == []  # a rejected call is not a tool use


def test_edit_runs_the_changed_arguments_and_history_shows_them(scripted: Any) -> None:
    model = scripted(
        plan_reply("Add"), tools_reply(call("add", {"a": 2, "b": 3}, "c1")), text("11")
    )
    graph = _graph(model, confirm_tools=("add",))
    _start(graph)
    graph.invoke(resume_with(graph, THREAD, edit({"a": 10, "b": 1})), THREAD)
    assert CALLS == [("add", {"a": 10, "b": 1})]
    messages = graph.get_state(THREAD).values["messages"]
    asked = next(m for m in messages if isinstance(m, AIMessage) and m.tool_calls)
    assert asked.tool_calls[0]["args"] == {"a": 10, "b": 1}


def test_two_pending_approvals_are_answered_together_and_routed_by_id(scripted: Any) -> None:
    model = scripted(
        plan_reply("Work"),
        tools_reply(
            call("add", {"a": 1, "b": 1}, "c1"),
            call("lookup", {"key": "k"}, "c2"),
            call("add", {"a": 5, "b": 5}, "c3"),
        ),
        text("done"),
    )
    graph = _graph(model, confirm_tools=("add",))
    _start(graph)
    request = _pending_calls(graph)
    assert [c.id for c in request.calls] == ["c1", "c3"]  # lookup needs no approval
    assert CALLS == []  # nothing ran while paused, not even the unguarded call
    answers = {"c1": reject("no"), "c3": edit({"a": 7, "b": 7})}
    graph.invoke(resume_with(graph, THREAD, answers), THREAD)
    assert sorted(CALLS) == [("add", {"a": 7, "b": 7}), ("lookup", {"key": "k"})]
    by_id = {
        m.tool_call_id: m
        for m in graph.get_state(THREAD).values["messages"]
        if isinstance(m, ToolMessage)
    }
    assert by_id["c1"].status == "error" and by_id["c2"].content == "value-of-k"
    assert by_id["c3"].content == "14"


def _write_tool(name: str, **metadata: Any) -> StructuredTool:
    def write(path: str) -> str:
        CALLS.append((name, {"path": path}))
        return f"wrote {path}"

    tool = StructuredTool.from_function(write, name=name, description="Write a file.")
    tool.metadata = metadata
    return tool


@pytest.mark.parametrize(
    ("config", "metadata", "reason"),
    [
        ({"confirm_permissions": ("fs:write",)}, {"permission": "fs:write"}, "fs:write"),
        ({"confirm_non_idempotent": True}, {"idempotency": "non_idempotent"}, "non-idempotent"),
    ],
)
def test_confirm_by_permission_and_by_effect(
    scripted: Any, config: dict[str, Any], metadata: dict[str, Any], reason: str
) -> None:
    model = scripted(
        plan_reply("Write"),
        tools_reply(call("write", {"path": "a.txt"}, "w1"), call("add", {"a": 1, "b": 2}, "a1")),
        text("written"),
    )
    graph = _graph(model, tools=[*TOOLS, _write_tool("write", **metadata)], **config)
    _start(graph)
    request = _pending_calls(graph)
    assert [c.id for c in request.calls] == ["w1"] and reason in request.calls[0].reason
    graph.invoke(resume_with(graph, THREAD, "approve"), THREAD)
    assert sorted(CALLS) == [("add", {"a": 1, "b": 2}), ("write", {"path": "a.txt"})]


def test_bad_answers_name_the_field_and_change_nothing(scripted: Any) -> None:
    model = scripted(plan_reply("Add"), tools_reply(call("add", {"a": 2, "b": 3}, "c1")))
    graph = _graph(model, confirm_tools=("add",))
    _start(graph)
    before = graph.get_state(THREAD)
    with pytest.raises(HumanInputError, match=r"resume\['nope'\].*pending ids: \['c1'\]"):
        resume_with(graph, THREAD, {"nope": "approve"})
    with pytest.raises(HumanInputError, match=r"resume\.action"):
        resume_with(graph, THREAD, "maybe")
    with pytest.raises(HumanInputError, match=r"resume\.args.*new arguments"):
        resume_with(graph, THREAD, {"action": "edit"})
    after = graph.get_state(THREAD)
    assert after.config == before.config and CALLS == []


def test_a_raw_invalid_resume_asks_again_with_the_error(scripted: Any) -> None:
    model = scripted(plan_reply("Add"), tools_reply(call("add", {"a": 2, "b": 3}, "c1")), text("5"))
    graph = _graph(model, confirm_tools=("add",))
    _start(graph)
    graph.invoke(Command(resume={"c9": "approve"}), THREAD)  # bypasses resume_with
    request = _pending_calls(graph)
    assert request.error is not None and "c9" in request.error and CALLS == []
    out = graph.invoke(resume_with(graph, THREAD, {"c1": "approve"}), THREAD)["output"]
    assert out["success"] and CALLS == [("add", {"a": 2, "b": 3})]


async def test_async_confirm_and_clarify(scripted: Any) -> None:
    model = scripted(
        plan_reply("Ask then add"),
        tools_reply(call("ask_user", {"question": "How much?"}, "q1")),
        tools_reply(call("add", {"a": 4, "b": 4}, "c1")),
        text("8"),
    )
    graph = _graph(model, clarify=True, confirm_tools=("add",))
    await graph.ainvoke({"messages": [("user", "add")]}, THREAD)
    await graph.ainvoke(resume_with(graph, THREAD, "four and four"), THREAD)
    assert isinstance(_pending_calls(graph), ConfirmRequest)
    out = (await graph.ainvoke(resume_with(graph, THREAD, "approve"), THREAD))["output"]
    assert out["success"] and CALLS == [("add", {"a": 4, "b": 4})]
    assert [s["kind"] for s in out["reasoning"]["steps"]].count("clarification") == 1


def test_ask_user_outside_a_graph_says_it_needs_one() -> None:
    from noema_graph.errors import ToolError
    from noema_graph.tools.ask_user import ask_user_tool

    with pytest.raises(ToolError, match="only be answered inside an agent graph run"):
        ask_user_tool().invoke({"question": "Which deck?"})


# --- a tool that pauses by itself --------------------------------------------------------


def _send_tool(sent: list[str]) -> StructuredTool:
    def send(to: str) -> str:
        """Send a message to ``to`` once the user agrees."""
        answer = interrupt({"type": "input", "question": f"Send to {to}?"})
        sent.append(to)
        return f"sent to {to}: {answer}"

    return StructuredTool.from_function(send, metadata={"idempotency": "non_idempotent"})


@pytest.mark.parametrize("run_async", [False, True])
async def test_a_non_idempotent_tool_that_pauses_runs_once_on_resume(
    scripted: Any, run_async: bool
) -> None:
    """The ledger lets a paused call run again on resume, and only that once."""
    sent: list[str] = []
    model = scripted(plan_reply("Send"), tools_reply(call("send", {"to": "ada"}, "s1")), text("ok"))
    store = InMemoryStore()
    graph = build_agent_graph(
        cfg(reflection_interval=10),
        model=model,
        tools=[_send_tool(sent)],
        checkpointer=InMemorySaver(),
        store=store,
    )
    inputs: Any = {"messages": [("user", "send it")]}
    first = await graph.ainvoke(inputs, THREAD) if run_async else graph.invoke(inputs, THREAD)
    assert first["__interrupt__"][0].value["question"] == "Send to ada?" and sent == []
    assert list(entries(store, "h1").values()) == ["paused"]
    resume = Command(resume="yes")
    state = await graph.ainvoke(resume, THREAD) if run_async else graph.invoke(resume, THREAD)
    assert sent == ["ada"] and state["output"]["success"]
    observation = next(s for s in state["output"]["reasoning"]["steps"] if s["kind"] == "tool")
    assert observation["observation"] == "sent to ada: yes"
    assert list(entries(store, "h1").values()) == ["done"]
