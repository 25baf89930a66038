"""The review_tools node: no pause without a call to approve; one pause for all that need it.

The pause is LangGraph's ``interrupt()``, which needs a running graph: those tests run the node
alone in a one-node graph with a checkpointer, then resume it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from noema_graph.effects import adrive, drive
from noema_graph.nodes.deps import AgentDeps
from noema_graph.nodes.review_tools import SPEC, review_tools
from noema_graph.state.agent import AgentState
from noema_graph.state.outcome import Outcome
from tests.helpers import TOOLS
from tests.nodes.helpers import Path, deps, run, runtime
from tests.scripted import call

THREAD = {"configurable": {"thread_id": "review"}}


def _message(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [HumanMessage("go"), AIMessage("", tool_calls=list(calls))], "iteration": 2}


def _graph(made: AgentDeps, path: Path) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Return a graph of review_tools alone, driven the way ``path`` says."""

    def review(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        return drive(review_tools(state, runtime, made))

    async def areview(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        return await adrive(review_tools(state, runtime, made))

    builder = StateGraph(AgentState)
    builder.add_node("review_tools", review if path == "sync" else areview)
    builder.add_edge(START, "review_tools")
    builder.add_edge("review_tools", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_no_call_needing_approval_means_no_pause(path: Path) -> None:
    state = _message(call("add", {"a": 1, "b": 2}, "c1"))
    update = run(review_tools(state, runtime(), deps(tools=TOOLS, confirm_tools=("lookup",))), path)
    assert update == {"tool_decisions": {}}
    assert SPEC.outcome(update) == (Outcome.SKIP, "no call needs approval")


def test_one_pause_asks_for_every_call_that_needs_approval(path: Path) -> None:
    made = deps(tools=TOOLS, confirm_tools=("add", "lookup"))
    graph = _graph(made, path)
    state = _message(
        call("add", {"a": 1, "b": 2}, "c1"),
        call("explode", {"reason": "x"}, "c2"),
        call("lookup", {"key": "k"}, "c3"),
    )
    if path == "sync":
        paused = graph.invoke(state, THREAD)
    else:
        paused = asyncio.run(graph.ainvoke(state, THREAD))
    (request,) = paused["__interrupt__"]
    assert [c["id"] for c in request.value["calls"]] == ["c1", "c3"]
    answer = Command(resume={"c1": {"action": "edit", "args": {"a": 5, "b": 5}}, "c3": "reject"})
    if path == "sync":
        final = graph.invoke(answer, THREAD)
    else:
        final = asyncio.run(graph.ainvoke(answer, THREAD))
    decisions = final["tool_decisions"]
    assert (decisions["c1"].action, decisions["c3"].action) == ("edit", "reject")
    edited = final["messages"][-1]
    assert [c["args"] for c in edited.tool_calls] == [
        {"a": 5, "b": 5},
        {"reason": "x"},
        {"key": "k"},
    ]
    assert [s.kind for s in final["trace"]] == ["approval", "approval"]
