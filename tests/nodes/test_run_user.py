"""Nodes read the run's learner from its context, configurable or authenticated user."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from noema_graph.context import RunContext
from noema_graph.nodes.common import memory_user


class _State(TypedDict, total=False):
    user: str


def _whose(state: _State, runtime: Runtime[RunContext]) -> dict[str, Any]:
    return {"user": memory_user(runtime)}


def _graph() -> Any:
    builder = StateGraph(_State, context_schema=RunContext)
    builder.add_node("whose", _whose)
    builder.add_edge(START, "whose")
    builder.add_edge("whose", END)
    return builder.compile()


def test_memories_belong_to_the_runs_learner_however_it_is_named() -> None:
    graph = _graph()
    # two learners named through configurable never share the default namespace
    assert graph.invoke({}, {"configurable": {"user_id": "ben"}})["user"] == "ben"
    assert graph.invoke({}, {"configurable": {"user_id": "cleo"}})["user"] == "cleo"
    assert graph.invoke({}, context=RunContext(user_id="ada"))["user"] == "ada"
    signed_in = {"langgraph_auth_user": object(), "langgraph_auth_user_id": "ada"}
    assert graph.invoke({}, {"configurable": signed_in})["user"] == "ada"
    assert graph.invoke({})["user"] == "anonymous"
