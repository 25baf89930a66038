"""The drawn graphs, their node names and compile settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from noema_graph import AgentConfig, build_agent_graph, build_ask_graph
from noema_graph.graphs.runtime import DURABILITY_KEY as CONFIG_KEY_DURABILITY
from tests.scripted import ScriptedChatModel

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _model() -> ScriptedChatModel:
    return ScriptedChatModel(script=[])


def test_agent_graph_matches_snapshot() -> None:
    drawn = build_agent_graph(model=_model()).get_graph().draw_mermaid()
    assert drawn == (SNAPSHOTS / "agent_graph.mmd").read_text()


def test_agent_graph_nodes_are_named_exactly() -> None:
    nodes = set(build_agent_graph(model=_model()).get_graph().nodes)
    assert nodes == {
        "__start__",
        "plan",
        "execute_step",
        "review_tools",
        "tool_node",
        "reflect",
        "revise_plan",
        "finalize",
        "__end__",
    }


def test_ask_graph_is_recall_then_answer() -> None:
    graph = build_ask_graph(model=_model()).get_graph()
    assert set(graph.nodes) == {"__start__", "recall_memory", "generate_answer", "__end__"}
    edges = {(e.source, e.target) for e in graph.edges}
    assert edges == {
        ("__start__", "recall_memory"),
        ("recall_memory", "generate_answer"),
        ("generate_answer", "__end__"),
    }


def test_compiled_with_recursion_limit_and_sync_durability() -> None:
    config = AgentConfig(max_iterations=7, reflection_interval=2, max_replans=1)
    graph: Any = build_agent_graph(config, model=_model(), checkpointer=InMemorySaver())
    assert graph.config["recursion_limit"] == config.recursion_limit()
    assert graph.config["configurable"][CONFIG_KEY_DURABILITY] == "sync"
    bare: Any = build_agent_graph(config, model=_model())  # no saver: durability is moot
    assert CONFIG_KEY_DURABILITY not in bare.config.get("configurable", {})


IMPORT_CHECK = """
import langgraph.graph.state as state_module
compiled = []
original = state_module.StateGraph.compile
def spy(self, *a, **k):
    compiled.append(self)
    return original(self, *a, **k)
state_module.StateGraph.compile = spy
import noema_graph, noema_graph.graphs, noema_graph.nodes.routing
print(len(compiled))
"""


def test_importing_the_package_compiles_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_CHECK],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.stdout.strip() == "0"
