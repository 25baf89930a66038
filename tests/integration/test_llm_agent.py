"""The full agent graph on the embedded model over real HTTP (marked ``llm``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from langchain_core.tools import tool

from noema_graph import AgentConfig, AgentOutput, build_agent_graph, sqlite_checkpointer
from noema_graph.models import make_model, model_profile

pytestmark = pytest.mark.llm

STOP_CODES = {"max_iterations", "timeout", "budget_exceeded", "loop_detected", "llm_error"}


@tool
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@tool
def capital(country: str) -> str:
    """Return the capital city of a country."""
    return {"france": "Paris", "japan": "Tokyo", "peru": "Lima"}.get(country.lower(), "unknown")


TASKS = [
    "Use the add tool to add 2 and 3.",
    "What is the capital of France? Use the capital tool.",
    "Add 10 and 32 with the add tool, then say the result.",
    "Find the capital of Japan with the capital tool.",
    "Say hello in one short sentence.",
]


@pytest.fixture(scope="module")
def local_model() -> Any:
    return make_model("local")


def _config(**kw: Any) -> AgentConfig:
    return AgentConfig(
        enabled_toolkits=(), max_iterations=4, reflection_interval=10, timeout_s=3_600, **kw
    )


def test_five_tasks_end_with_a_valid_output(local_model: Any, tmp_path: Path) -> None:
    assert model_profile(local_model).is_local
    visited: set[str] = set()
    with sqlite_checkpointer(tmp_path / "llm.sqlite") as saver:
        graph = build_agent_graph(
            _config(), model=local_model, tools=[add, capital], checkpointer=saver
        )
        for i, task in enumerate(TASKS):
            thread = {"configurable": {"thread_id": f"task-{i}"}}
            for update in graph.stream(
                {"messages": [("user", task)]}, thread, stream_mode="updates"
            ):
                visited.update(update)
            state = graph.get_state(thread).values
            out = AgentOutput.model_validate(state["output"])  # structurally valid, every time
            assert out.success or (out.error is not None and out.error.code in STOP_CODES)
            assert out.metadata.token_usage.total_tokens > 0
            assert out.metadata.estimated_cost_usd == 0.0
            assert out.metadata.model == "smollm2-135m-instruct"
            assert out.reasoning.steps[0].kind in ("plan", "plan_fallback")
            assert out.reasoning.steps[-1].kind in ("final", "limit")
            assert 0.0 <= out.reasoning.confidence <= 1.0
    assert {"plan", "execute_step", "finalize"} <= visited
    assert "tool_node" in visited, "no task reached a tool call"


def test_react_protocol_calls_a_registered_tool(local_model: Any) -> None:
    graph = build_agent_graph(_config(protocol="react"), model=local_model, tools=[add, capital])
    state = graph.invoke({"messages": [("user", "Use the add tool to add 2 and 3.")]})
    steps = state["output"]["reasoning"]["steps"]
    actions = [s["action"]["tool"] for s in steps if s["kind"] in ("tool", "hallucinated_action")]
    # the grammar only lets the model name registered tools
    assert set(actions) <= {"add", "capital"}
    for step in steps:
        if step["kind"] == "tool":
            assert isinstance(step["action"]["input"], dict)


def test_streamed_tokens_carry_usage(local_model: Any) -> None:
    graph = build_agent_graph(_config(), model=local_model, tools=[add])
    chunks = [
        message
        for message, meta in graph.stream(
            {"messages": [("user", "Say hi.")]}, stream_mode="messages"
        )
        if isinstance(message, AIMessageChunk) and meta["langgraph_node"] == "execute_step"
    ]
    assert len(chunks) > 1, "tokens arrive as several chunks"
    assert sum((c.usage_metadata or {}).get("total_tokens", 0) for c in chunks) > 0
