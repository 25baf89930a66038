"""Pre- and post-process hooks around nodes and around a whole agent run (seed 001, Hooks).

A hook is a plain function declared in an :class:`~noema_graph.config.AgentConfig` (or an
agent definition), keyed by node name, or by ``"agent"`` for the run as a whole:

* ``pre_process(call) -> dict | None`` sees the node's input and may return replacement
  values for some of its keys (add context, rewrite a tool call's arguments). The
  replacements are what the node sees; they are not written to the state by themselves.
  ``"agent"`` pre hooks run before ``plan`` (agent graph) or ``recall_memory`` (ask graph).
* ``post_process(call, update) -> dict | None`` sees the node's update and may return a
  replacement (redact, annotate). ``"agent"`` post hooks run on ``finalize``'s update,
  whose ``"output"`` is the output contract. Returning None keeps the update.

Raise :class:`~noema_graph.errors.HookVeto` to stop the run on purpose (e.g. veto a plan):
the run ends in ``finalize`` with error code ``hook_veto`` (``forbidden`` for its subclass
:class:`~noema_graph.errors.Forbidden`: a request for another learner's data). Any other
exception ends it with ``hook_error``. Either way the output names the node, the stage and
the message, and a failed post hook of ``finalize`` drops the result (a redaction that
failed must not leak).

Example:
    >>> def no_deletes(call: HookCall, update: dict[str, object]) -> None:
    ...     if "delete" in str(update.get("plan")):
    ...         raise HookVeto("plans may not delete anything")
    >>> hooks = Hooks(post_process={"plan": (no_deletes,)})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.context import RunContext

AGENT = "agent"
"""Key of the hooks that wrap the whole run rather than one node."""


@dataclass(frozen=True)
class HookCall:
    """What a hook is told: the agent, the node, the node's input and the run context."""

    agent: str
    node: str
    state: Mapping[str, Any]  # the agent state, as the node reads it
    context: RunContext


PreHook = Callable[[HookCall], Mapping[str, object] | None]
PostHook = Callable[[HookCall, dict[str, object]], Mapping[str, object] | None]


class Hooks(BaseModel):
    """Hooks by node name (or ``"agent"``), each a tuple run in order."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    pre_process: Mapping[str, tuple[PreHook, ...]] = Field(
        default_factory=dict[str, tuple[PreHook, ...]],
        description="node name or 'agent' -> functions run before the node.",
    )
    post_process: Mapping[str, tuple[PostHook, ...]] = Field(
        default_factory=dict[str, tuple[PostHook, ...]],
        description="node name or 'agent' -> functions run on the node's update.",
    )

    def names(self) -> set[str]:
        """Return every node name (or ``"agent"``) that has a hook."""
        return {*self.pre_process, *self.post_process}
