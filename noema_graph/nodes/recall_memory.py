"""The ``recall_memory`` node: read relevant memories from the Store, never write."""

from __future__ import annotations

from langgraph.types import Overwrite

from noema_graph.effects import Steps
from noema_graph.memory import MemoryRecall
from noema_graph.nodes.common import (
    emit,
    memory_items,
    recall,
    start_run,
    stopwatch,
)
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.nodes.spec import NodeSpec
from noema_graph.state.agent import AskState, AskUpdate
from noema_graph.state.models import ReasoningStep, RunInfo, Usage
from noema_graph.state.reducers import append_steps


def _update(
    run: RunInfo, runtime: NodeRuntime, recalled: MemoryRecall, seconds: float
) -> AskUpdate:
    hits, warning = recalled
    if warning is not None:
        emit(runtime, warning.to_event(), {"run": run})
    memory = memory_items(hits)
    trace = [
        ReasoningStep(
            kind="memory",
            thought=f"Recalled {len(memory)} memories.",
            observation="\n".join(m["value"] for m in memory)[:2000],
        )
    ]
    return {
        "run": run,
        "memory_context": memory,
        "trace": Overwrite(append_steps([], [trace])),
        "usage": Overwrite(Usage()),
        "elapsed_s": Overwrite(seconds),
        "llm_error": None,
        "output": {},
    }


def recall_memory(state: AskState, runtime: NodeRuntime, deps: AgentDeps) -> Steps[AskUpdate]:
    """Recall memories relevant to the question, read-only.

    Reads: messages, the Store. Writes: run, memory_context, trace (reset), usage (reset).
    A memory failure becomes a warning event; the answer goes on without memory.
    """
    with stopwatch() as took:
        run, request = start_run(runtime, deps, state, mode="ask")
        recalled = yield from recall(runtime, deps, request)
    return _update(run, runtime, recalled, took[0])


SPEC = NodeSpec(recall_memory)
