"""Pre/post-process hooks that modify and veto, and the typed outcomes of nodes and runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph import HookCall, Hooks, HookVeto, Outcome
from noema_graph.errors import ConfigurationError
from noema_graph.graphs import build_agent_graph, build_ask_graph
from noema_graph.graphs.agent import SPECS
from noema_graph.nodes.middleware import stamp
from noema_graph.state.models import HookFailure, Reflection
from noema_graph.state.outcome import run_outcome
from tests.helpers import CALLS, TOOLS, cfg
from tests.scripted import call, plan_reply, text, tools_reply

THREAD: Any = {"configurable": {"thread_id": "hooks"}}


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


def _run(model: Any, hooks: Hooks, **config: Any) -> dict[str, Any]:
    graph = build_agent_graph(
        cfg(reflection_interval=10, hooks=hooks, **config),
        model=model,
        tools=TOOLS,
        checkpointer=InMemorySaver(),
    )
    return graph.invoke({"messages": [("user", "add 2 and 3")]}, THREAD)


# --- hooks that modify ---------------------------------------------------------------------


def test_pre_hook_rewrites_a_tool_call_and_post_hook_redacts_the_output(scripted: Any) -> None:
    seen: list[str] = []

    def double_args(call: HookCall) -> Mapping[str, Any]:
        seen.append(call.node)
        task = call.state["tool_call"]
        return {"tool_call": {**task, "args": {k: v * 2 for k, v in task["args"].items()}}}

    def redact(call: HookCall, update: dict[str, Any]) -> dict[str, Any]:
        output = update["output"]
        result = str(output["result"]).replace("secret", "[redacted]")
        return {**update, "output": {**output, "result": result}}

    model = scripted(
        plan_reply("Add"),
        tools_reply(call("add", {"a": 2, "b": 3}, "c1")),
        text("the secret sum is 10"),
    )
    hooks = Hooks(pre_process={"tool_node": (double_args,)}, post_process={"agent": (redact,)})
    state = _run(model, hooks)
    assert seen == ["tool_node"] and CALLS == [("add", {"a": 4, "b": 6})]
    assert state["output"]["result"] == "the [redacted] sum is 10"
    assert state["output"]["success"] and state["output"]["outcome"] == "success"


def test_agent_pre_hook_adds_context_the_planner_sees(scripted: Any) -> None:
    def add_context(call: HookCall) -> Mapping[str, Any]:
        assert call.agent == "noema" and call.node == "plan"
        return {"messages": [*call.state["messages"], ("user", "Context: the learner is Ada.")]}

    model = scripted(plan_reply("Answer"), text("hello Ada"))
    state = _run(model, Hooks(pre_process={"agent": (add_context,)}))
    assert "the learner is Ada" in str(model.prompts[0][-1].content)
    assert state["output"]["success"]
    # a pre hook changes what the node sees, not the saved history
    assert all("Ada" not in str(m.content) for m in state["messages"][:1])


# --- hooks that stop the run ---------------------------------------------------------------


def test_a_post_hook_vetoes_the_plan_and_the_run_ends_cleanly(scripted: Any) -> None:
    def no_deletions(call: HookCall, update: dict[str, Any]) -> None:
        if any("delete" in s.description for s in update["plan"].steps):
            raise HookVeto("plans may not delete cards")

    model = scripted(plan_reply("delete every card"))  # no step runs after the veto
    state = _run(model, Hooks(post_process={"plan": (no_deletions,)}))
    out = state["output"]
    assert not out["success"] and out["outcome"] == "terminate"
    assert out["error"]["code"] == "hook_veto"
    assert out["error"]["details"] == {
        "code": "hook_veto",
        "node": "plan",
        "stage": "post_process",
        "message": "plans may not delete cards",
    }
    assert state.get("plan") is None  # the vetoed plan was not saved


def test_a_hook_error_ends_the_run_with_its_own_code(scripted: Any) -> None:
    def broken(call: HookCall) -> None:
        raise KeyError("missing")

    model = scripted(plan_reply("Add"))
    state = _run(model, Hooks(pre_process={"execute_step": (broken,)}))
    out = state["output"]
    assert out["error"]["code"] == "hook_error" and out["outcome"] == "error"
    assert out["error"]["details"]["node"] == "execute_step"
    assert "KeyError" in out["error"]["details"]["message"]
    assert state["outcome"].node == "finalize"


def test_a_failed_redaction_drops_the_result(scripted: Any) -> None:
    def broken(call: HookCall, update: dict[str, Any]) -> None:
        raise RuntimeError("redactor offline")

    model = scripted(plan_reply("Answer"), text("the secret is 42"))
    out = _run(model, Hooks(post_process={"agent": (broken,)}))["output"]
    assert not out["success"] and out["result"] is None
    assert out["error"]["code"] == "hook_error" and "redactor offline" in out["error"]["message"]


def test_ask_graph_hooks_veto_before_the_model_is_called(scripted: Any) -> None:
    def veto(call: HookCall) -> None:
        raise HookVeto("questions are closed")

    model = scripted()  # never called
    graph = build_ask_graph(
        cfg(mode="ask", hooks=Hooks(pre_process={"agent": (veto,)})), model=model
    )
    out = graph.invoke({"messages": [("user", "why?")]})["output"]
    assert out["error"]["code"] == "hook_veto" and out["outcome"] == "terminate"


def test_unknown_hook_node_is_a_configuration_error(scripted: Any) -> None:
    hooks = Hooks(pre_process={"plann": (lambda call: None,)})
    with pytest.raises(ConfigurationError, match=r"hooks: no node named 'plann'.*fix: key hooks"):
        build_agent_graph(cfg(hooks=hooks), model=scripted())


def test_a_hook_must_be_callable() -> None:
    with pytest.raises(ValueError, match=r"pre_process\.plan\.0\s+Input should be callable"):
        Hooks(pre_process={"plan": ("not a function",)})  # type: ignore[dict-item]


# --- outcomes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "terminal", "success", "loop"),
    [
        (Outcome.SUCCESS, False, True, False),
        (Outcome.ERROR, True, False, False),
        (Outcome.CLARIFY, False, False, True),
        (Outcome.CONFIRM, False, False, True),
        (Outcome.REPLAN, False, False, True),
        (Outcome.LOOP_BACK, False, False, True),
        (Outcome.TERMINATE, True, False, False),
        (Outcome.SKIP, False, False, False),
        (Outcome.PARTIAL, True, False, False),
    ],
)
def test_outcome_predicates(outcome: Outcome, terminal: bool, success: bool, loop: bool) -> None:
    assert (outcome.is_terminal, outcome.is_success, outcome.requires_loop) == (
        terminal,
        success,
        loop,
    )
    assert outcome.requires_human == (outcome in (Outcome.CLARIFY, Outcome.CONFIRM))


@pytest.mark.parametrize(
    ("success", "validated", "code", "expected"),
    [
        (True, None, None, Outcome.SUCCESS),
        (True, False, None, Outcome.PARTIAL),
        (False, None, "max_iterations", Outcome.PARTIAL),
        (False, None, "timeout", Outcome.PARTIAL),
        (False, None, "cancelled", Outcome.TERMINATE),
        (False, None, "loop_detected", Outcome.TERMINATE),
        (False, None, "hook_veto", Outcome.TERMINATE),
        (False, None, "llm_error", Outcome.ERROR),
        (False, None, "hook_error", Outcome.ERROR),
    ],
)
def test_run_outcome(
    success: bool, validated: bool | None, code: str | None, expected: Outcome
) -> None:
    assert run_outcome(success=success, validated=validated, code=code) is expected


@pytest.mark.parametrize(
    ("node", "update", "expected"),
    [
        ("execute_step", {"cancelled": True}, Outcome.TERMINATE),
        ("execute_step", {"llm_error": "boom"}, Outcome.ERROR),
        (
            "execute_step",
            {"iteration": 1, "messages": [AIMessage("", tool_calls=[call("add", {}, "x")])]},
            Outcome.LOOP_BACK,
        ),
        ("execute_step", {"iteration": 1, "messages": [AIMessage("done")]}, Outcome.SUCCESS),
        (
            "tool_node",
            {"messages": [ToolMessage("no", tool_call_id="x", status="error")]},
            Outcome.SKIP,
        ),
        ("review_tools", {"tool_decisions": {}}, Outcome.SKIP),
        (
            "reflect",
            {
                "reflection": Reflection(
                    progress="p", remaining="r", decision="revise", reason="wrong plan"
                )
            },
            Outcome.REPLAN,
        ),
        ("revise_plan", {}, Outcome.REPLAN),
        (
            "plan",
            {
                "hook_error": HookFailure(
                    code="hook_veto", node="plan", stage="post_process", message="no"
                )
            },
            Outcome.TERMINATE,
        ),
        ("plan", {}, Outcome.SUCCESS),
    ],
)
def test_classify_node_updates(node: str, update: dict[str, Any], expected: Outcome) -> None:
    spec = {s.name: s for s in SPECS}[node]
    assert stamp(spec, update, final=node == "finalize").kind is expected


def test_every_node_update_carries_its_outcome(scripted: Any) -> None:
    model = scripted(plan_reply("Add"), tools_reply(call("add", {"a": 1, "b": 1}, "c1")), text("2"))
    graph = build_agent_graph(
        cfg(reflection_interval=10), model=model, tools=TOOLS, checkpointer=InMemorySaver()
    )
    outcomes = [
        (update["outcome"].node, update["outcome"].outcome)
        for chunk in graph.stream({"messages": [("user", "add")]}, THREAD, stream_mode="updates")
        for update in chunk.values()
        if update
    ]
    assert outcomes == [
        ("plan", "success"),
        ("execute_step", "loop_back"),
        ("tool_node", "success"),
        ("execute_step", "success"),
        ("finalize", "success"),
    ]


def test_a_limit_makes_the_run_partial(scripted: Any) -> None:
    model = scripted(plan_reply("Add", "Add again"), text("one"))
    out = _run(model, Hooks(), max_iterations=1)["output"]
    assert out["error"]["code"] == "max_iterations" and out["outcome"] == "partial"
