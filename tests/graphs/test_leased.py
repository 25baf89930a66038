"""``run_configurable`` merges configs as LangGraph's Pregel does, inside and outside a parent run.

The lease decides from the merged ``configurable`` whether a run is a subgraph of another (no
lease) or a run of its own thread. LangGraph keeps its merge private
(``langgraph._internal._config.ensure_config``); the package uses its own, and this test
compares the two, so a change in LangGraph's rule fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph._internal._config import ensure_config  # pyright: ignore[reportPrivateUsage]

from noema_graph.graphs.leased import run_configurable

PARENT: RunnableConfig = {
    "configurable": {
        "thread_id": "parent",
        "checkpoint_ns": "node:1",
        "__pregel_checkpointer": object(),
        "user": "ada",
    },
    "tags": ["parent"],
}
CASES: list[tuple[RunnableConfig | None, RunnableConfig | None]] = [
    (None, None),
    (None, {"configurable": {"thread_id": "t"}}),
    ({"configurable": {"user": "bound"}}, {"configurable": {"thread_id": "t"}}),
    ({"configurable": {"user": "bound"}}, {"configurable": {"user": "given"}, "tags": ["x"]}),
    (None, {"configurable": {"checkpoint_id": "c1"}}),
    (None, {"configurable": {"checkpoint_map": {}}}),
    (None, {"recursion_limit": 5}),
    (None, {"thread_id": "top-level"}),  # pyright: ignore[reportAssignmentType]
]


def _pregel(*configs: RunnableConfig | None) -> dict[str, Any]:
    return dict(ensure_config(*configs).get("configurable") or {})


@pytest.mark.parametrize(("bound", "given"), CASES)
@pytest.mark.parametrize("ambient", [None, PARENT])
def test_the_merge_matches_pregel_s(
    ambient: RunnableConfig | None, bound: RunnableConfig | None, given: RunnableConfig | None
) -> None:
    token = var_child_runnable_config.set(ambient)
    try:
        assert run_configurable(bound, given) == _pregel(bound, given)
    finally:
        var_child_runnable_config.reset(token)


def test_a_config_with_its_own_thread_leaves_the_parent_s_keys_out() -> None:
    token = var_child_runnable_config.set(PARENT)
    try:
        inherited = run_configurable(None, {"configurable": {"user": "x"}})
        own = run_configurable(None, {"configurable": {"thread_id": "child"}})
    finally:
        var_child_runnable_config.reset(token)
    assert "__pregel_checkpointer" in inherited and inherited["thread_id"] == "parent"
    assert own == {"thread_id": "child"}
