"""Every limit ends the run in finalize with a typed reason and the partial result."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.clock import ManualClock
from noema_graph.context import RunContext
from noema_graph.graphs import build_agent_graph
from tests.helpers import TOOLS, cfg
from tests.scripted import call, plan_reply, reflection_reply, text, tools_reply

THREAD = {"configurable": {"thread_id": "t1"}}


def run(
    model: Any,
    config: Any,
    tools: Any = TOOLS,
    context: RunContext | None = None,
    thread: dict[str, Any] = THREAD,
) -> dict[str, Any]:
    graph = build_agent_graph(config, model=model, tools=tools, checkpointer=InMemorySaver())
    return graph.invoke({"messages": [("user", "go")]}, thread, context=context)


def _error(state: dict[str, Any]) -> str:
    out = state["output"]
    assert out["success"] is False
    return out["error"]["code"]


def test_max_iterations(scripted: Any) -> None:
    replies = [tools_reply(call("add", {"a": i, "b": 1})) for i in range(3)]
    model = scripted(plan_reply("one", "two"), text("one done"), *replies[:2])
    state = run(model, cfg(max_iterations=3, reflection_interval=10))
    assert _error(state) == "max_iterations"
    assert state["output"]["result"] == "one: one done"  # the partial result
    assert state["iteration"] == 3
    assert "iteration limit" in state["messages"][-1].content


def test_timeout(scripted: Any, manual_clock: ManualClock) -> None:
    @tool
    def slow() -> str:
        """Take 0.3 s of the run's time."""
        manual_clock.advance(0.3)
        return "slept"

    model = scripted(plan_reply("one"), tools_reply(call("slow")))
    state = run(model, cfg(timeout_s=0.2), tools=[slow])
    assert _error(state) == "timeout"
    assert state["output"]["metadata"]["execution_time_ms"] == 300


def test_context_timeout_overrides_config(scripted: Any, manual_clock: ManualClock) -> None:
    @tool
    def slow() -> str:
        """Take 0.2 s of the run's time."""
        manual_clock.advance(0.2)
        return "slept"

    model = scripted(plan_reply("one"), tools_reply(call("slow")))
    state = run(model, cfg(timeout_s=100), tools=[slow], context=RunContext(timeout_s=0.1))
    assert _error(state) == "timeout"


def test_token_budget_answers_dangling_calls(scripted: Any) -> None:
    model = scripted(plan_reply("one"), tools_reply(call("add", {"a": 1, "b": 2}, "c1")))
    state = run(model, cfg(max_total_tokens=20))
    assert _error(state) == "budget_exceeded"
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.tool_call_id == "c1" and "Not executed" in answer.content
    assert state["output"]["metadata"]["token_usage"]["total_tokens"] == 30


def test_cost_budget(scripted: Any) -> None:
    model = scripted(plan_reply("one", "two"), text("one done"))
    state = run(model, cfg(max_cost_usd=0.00003))  # 2 calls cost 0.00004
    assert _error(state) == "budget_exceeded"
    assert state["output"]["metadata"]["estimated_cost_usd"] == pytest.approx(0.00004)


def test_cancel_with_abort_event(scripted: Any) -> None:
    abort = threading.Event()

    @tool
    def stopper() -> str:
        """Ask the run to stop."""
        abort.set()
        return "stopping"

    model = scripted(plan_reply("one"), tools_reply(call("stopper")))
    state = run(model, cfg(), tools=[stopper], context=RunContext(abort=abort))
    assert _error(state) == "cancelled"
    assert state["output"]["error"]["recoverable"] is True


def test_loop_detected_after_forced_reflection(scripted: Any) -> None:
    same = [tools_reply(call("lookup", {"key": "k"})) for _ in range(4)]
    model = scripted(plan_reply("one"), *same[:3], reflection_reply("continue"), same[3])
    state = run(model, cfg(reflection_interval=100))
    assert _error(state) == "loop_detected"
    kinds = [s["kind"] for s in state["output"]["reasoning"]["steps"]]
    assert kinds.count("reflection") == 1 and kinds.count("tool") == 4
    assert "same tool call" in model.prompts[4][0].content  # the forced reflection's warning


def test_small_recursion_limit_finalizes_instead_of_raising(scripted: Any) -> None:
    replies = [tools_reply(call("add", {"a": i, "b": 1})) for i in range(10)]
    model = scripted(plan_reply("one"), *replies[:2])
    thread = {"configurable": {"thread_id": "t1"}, "recursion_limit": 9}
    state = run(model, cfg(reflection_interval=100), thread=thread)
    assert _error(state) == "max_iterations"


def _request() -> httpx.Request:
    return httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def test_transient_errors_are_retried(scripted: Any) -> None:
    model = scripted(
        plan_reply("one"),
        openai.APITimeoutError(request=_request()),
        openai.APIConnectionError(request=_request()),
        text("done"),
    )
    state = run(model, cfg())
    assert state["output"]["success"] and state["output"]["result"] == "done"


def test_non_transient_error_ends_with_llm_error(scripted: Any) -> None:
    denied = openai.AuthenticationError(
        "bad key", response=httpx.Response(401, request=_request()), body=None
    )
    model = scripted(plan_reply("one"), denied)
    state = run(model, cfg())
    assert _error(state) == "llm_error"
    assert state["output"]["error"]["recoverable"] is False
    assert "bad key" in state["output"]["error"]["details"]["llm_error"]


def test_retries_exhausted_end_with_llm_error(scripted: Any) -> None:
    model = scripted(plan_reply("one"), *[openai.APITimeoutError(request=_request())] * 2)
    state = run(model, cfg(model_retries=2))
    assert _error(state) == "llm_error"


def test_partial_result_has_completed_steps(scripted: Any) -> None:
    model = scripted(plan_reply("one", "two", "three"), text("r1"), text("r2"))
    state = run(model, cfg(max_iterations=2, reflection_interval=10))
    assert _error(state) == "max_iterations"
    assert state["output"]["result"] == "one: r1\ntwo: r2"
    final = state["messages"][-1]
    assert isinstance(final, AIMessage) and "r2" in final.content


async def test_cancelling_the_task_finalizes_with_cancelled(scripted: Any) -> None:
    import asyncio

    from noema_graph.cancellation import ainvoke_cancellable

    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait a long time."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    model = scripted(plan_reply("one"), tools_reply(call("slow", {}, "s1")))
    graph = build_agent_graph(cfg(), model=model, tools=[slow], checkpointer=InMemorySaver())
    task = asyncio.create_task(ainvoke_cancellable(graph, {"messages": [("user", "go")]}, THREAD))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    state = await asyncio.wait_for(task, 10)
    assert _error(state) == "cancelled"
    answer = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert answer.status == "error" and "cancelled" in answer.content
    snapshot = await graph.aget_state(THREAD)
    assert snapshot.next == ()  # the run ended in finalize, nothing is pending


async def test_abort_interrupts_a_running_model_call(scripted: Any) -> None:
    import asyncio

    abort = threading.Event()

    def slow_reply(_messages: Any) -> AIMessage:
        abort.set()  # the caller aborts while the model is still answering
        time.sleep(0.5)
        return AIMessage(content="too late")

    model = scripted(plan_reply("one"), slow_reply)
    graph = build_agent_graph(cfg(), model=model, tools=TOOLS, checkpointer=InMemorySaver())
    state = await asyncio.wait_for(
        graph.ainvoke({"messages": [("user", "go")]}, THREAD, context=RunContext(abort=abort)), 10
    )
    assert _error(state) == "cancelled"
    assert state["iteration"] == 0  # the interrupted answer was not used


def test_abort_interrupts_a_running_model_call_on_the_sync_path(scripted: Any) -> None:
    abort = threading.Event()
    release = threading.Event()

    def slow_reply(_messages: Any) -> AIMessage:
        abort.set()  # the caller aborts while the model is still answering
        release.wait(10)  # a call that would hang without the abort
        return AIMessage(content="too late")

    model = scripted(plan_reply("one"), slow_reply)
    graph = build_agent_graph(cfg(), model=model, tools=TOOLS, checkpointer=InMemorySaver())
    try:
        state = graph.invoke(
            {"messages": [("user", "go")]}, THREAD, context=RunContext(abort=abort)
        )
    finally:
        release.set()
    assert _error(state) == "cancelled"
    assert state["iteration"] == 0  # the interrupted answer was not used


def test_after_a_loop_reflection_the_next_turn_has_no_tools(scripted: Any) -> None:
    same = [tools_reply(call("lookup", {"key": "k"})) for _ in range(3)]
    model = scripted(plan_reply("one"), *same, reflection_reply("continue"), text("k is v"))
    state = run(model, cfg(reflection_interval=100))
    assert state["output"]["success"] and state["output"]["result"] == "k is v"
    answer_prompt = model.prompts[5][0].content
    assert "Tools are not available for this turn" in answer_prompt
    # binds: the plan schema, the tools (once: the three tool turns share the bound model),
    # the reflection schema; none for the answer (tests/nodes/test_execute_step.py checks
    # an answer-only turn binds nothing, with fresh dependencies)
    assert model.bound_tool_names == [["PlanDraft"], ["add", "lookup", "explode"], ["Reflection"]]
    assert state["answer_only"] is False  # used once, then cleared
