"""How a node is declared: its body, the typed outcome of its update, its retry policy.

Every node module ends with one ``SPEC = NodeSpec(body, outcome)``; the graph factories
register the spec and :class:`~noema_graph.nodes.middleware.Node` runs it. The outcome rule
sits next to the node it describes, so no table of node names has to be kept in step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from noema_graph.effects import Steps
from noema_graph.nodes.deps import AgentDeps, NodeRuntime
from noema_graph.state.outcome import Outcome

StateT = TypeVar("StateT", bound=Mapping[str, object])
"""What a node reads: its graph's state, or the payload it is sent (a tool group)."""
UpdateT = TypeVar("UpdateT", bound=Mapping[str, object])
"""What a node writes: a partial update of its graph's state (``AgentUpdate``, ``AskUpdate``
or ``ToolUpdate``)."""

Body = Callable[[StateT, NodeRuntime, AgentDeps], Steps[UpdateT]]
OutcomeRule = Callable[[UpdateT], tuple[Outcome, str]]
AfterRun = Callable[[StateT, UpdateT, NodeRuntime, AgentDeps], Steps[None]]


def succeeded(update: object) -> tuple[Outcome, str]:
    """Outcome rule of nodes that either succeed or raise."""
    del update
    return Outcome.SUCCESS, ""


@dataclass(frozen=True)
class NodeSpec(Generic[StateT, UpdateT]):
    """A node: its body (a step generator), its outcome rule, whether it calls the model.

    ``after`` runs once the node's update is final (after its post hooks): the run-end
    work of a final node, such as remembering the run. ``own_hooks`` nodes apply the hooks
    themselves, per item (``tool_node``: each hook sees one tool call).
    """

    body: Body[StateT, UpdateT]
    outcome: OutcomeRule[UpdateT] = succeeded
    calls_model: bool = False
    after: AfterRun[StateT, UpdateT] | None = None
    own_hooks: bool = False

    @property
    def name(self) -> str:
        """Return the node name: the body's function name."""
        return self.body.__name__
