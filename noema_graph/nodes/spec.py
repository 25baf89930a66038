"""How a node is declared: its body, the typed outcome of its update, its retry policy.

Every node module ends with one ``SPEC = NodeSpec(body, outcome)``; the graph factories
register the spec and :class:`~noema_graph.nodes.middleware.Node` runs it. The outcome rule
sits next to the node it describes, so no table of node names has to be kept in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from noema_graph.effects import Steps
from noema_graph.nodes.deps import AgentDeps
from noema_graph.state.outcome import Outcome

Body = Callable[[Any, Runtime[Any], AgentDeps], Steps[dict[str, Any]]]
OutcomeRule = Callable[[Mapping[str, Any]], tuple[Outcome, str]]
AfterRun = Callable[[Any, dict[str, Any], Runtime[Any], AgentDeps], Steps[None]]


def succeeded(update: Mapping[str, Any]) -> tuple[Outcome, str]:
    """Outcome rule of nodes that either succeed or raise."""
    del update
    return Outcome.SUCCESS, ""


@dataclass(frozen=True)
class NodeSpec:
    """A node: its body (a step generator), its outcome rule, whether it calls the model.

    ``after`` runs once the node's update is final (after its post hooks): the run-end
    work of a final node, such as remembering the run. ``own_hooks`` nodes apply the hooks
    themselves, per item (``tool_node``: each hook sees one tool call).
    """

    body: Body
    outcome: OutcomeRule = succeeded
    calls_model: bool = False
    after: AfterRun | None = None
    own_hooks: bool = False

    @property
    def name(self) -> str:
        """Return the node name: the body's function name."""
        return self.body.__name__
