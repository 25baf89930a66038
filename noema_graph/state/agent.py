"""Graph state schemas: the agent graph's, the ask graph's and the tool task payload."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.checkpoint.base import DeltaChannelHistory
from langgraph.managed import RemainingSteps
from langgraph.types import Overwrite
from pydantic import JsonValue
from typing_extensions import TypedDict

from noema_graph.state.channels import Delta, Folded
from noema_graph.state.human import Decision
from noema_graph.state.models import (
    HookFailure,
    LoopGuard,
    ReasoningStep,
    Reflection,
    RequestReading,
    RunInfo,
    StopReason,
    TaskPlan,
    ToolTime,
    Usage,
)
from noema_graph.state.outcome import NodeOutcome
from noema_graph.state.reducers import (
    add_seconds,
    add_tool_time,
    add_usage,
    append_steps,
    last_write,
    latest,
    merge_messages,
)

SNAPSHOT_FREQUENCY = 2**31 - 1
"""Updates between full snapshots of the delta channels (messages, trace, output): never.

A snapshot holds the channel's whole value, so one every k updates makes a thread's size
grow with the square of its length (at 1,000 iterations, snapshots would be most of the
file). Without them a checkpoint is rebuilt from all its ancestors' writes, which noema's
SQLite saver reads once per thread and caches (:mod:`noema_graph.storage.sqlite.delta`); LangGraph
still snapshots a channel 5,000 supersteps after its last snapshot.
"""


MESSAGES = Delta(merge_messages, list, snapshot_frequency=SNAPSHOT_FREQUENCY)
TRACE = Delta(append_steps, list, snapshot_frequency=SNAPSHOT_FREQUENCY)
OUTPUT = Delta(last_write, dict, snapshot_frequency=SNAPSHOT_FREQUENCY)
DELTA_CHANNELS: dict[str, Delta] = {
    "messages": MESSAGES,
    "trace": TRACE,
    "output": OUTPUT,
}
"""The delta channels of the state schemas, by name (readers rebuild values with them)."""


def replayed(name: str, entry: DeltaChannelHistory) -> object:
    """Return the value of delta channel ``name`` rebuilt from ``entry`` (seed, then writes).

    Without a seed the channel starts empty, as LangGraph starts it from a checkpoint that
    does not hold it.
    """
    spec = DELTA_CHANNELS[name]
    channel = spec.from_checkpoint(entry["seed"] if "seed" in entry else spec.ValueType())
    channel.replay_writes(entry["writes"])
    return channel.get()


Messages = Annotated[list[AnyMessage], MESSAGES]
"""The conversation: a delta channel (each checkpoint stores only its new messages)."""
Trace = Annotated[list[ReasoningStep], TRACE]
"""The ReAct trace: a delta channel, numbered in order by :func:`append_steps`."""
Output = Annotated[dict[str, Any], OUTPUT]
"""The output contract: a delta channel holding the newest write, so it is stored once
(as ``finalize``'s write), not again in the checkpoint after it."""
UsageTotal = Annotated[Usage, Folded(Usage, add_usage)]
"""Tokens, cost and model calls of the run so far (each node adds its own)."""
Seconds = Annotated[float, Folded(float, add_seconds)]
"""Active seconds of the nodes so far."""
ToolSeconds = Annotated[ToolTime, Folded(ToolTime, add_tool_time)]
"""Tool time so far, a concurrent group counted once."""
LatestOutcome = Annotated[NodeOutcome | None, Folded(NodeOutcome, latest)]
"""The typed outcome of the last node that ran."""


class MemoryItem(TypedDict):
    """A recalled memory as state keeps it: the entry's key and text, and its score."""

    key: str
    value: str
    score: float


class RouteState(TypedDict, total=False):
    """The agent graph's channels that limits and routing depend on.

    Routers are registered with this schema, so LangGraph reads only these channels (not the
    output contract, memory or outcome) each time it routes. ``messages`` and ``trace`` are
    delta channels (linear checkpoint growth).
    """

    messages: Messages
    trace: Trace
    usage: UsageTotal
    elapsed_s: Seconds
    tool_time: ToolSeconds
    run: RunInfo
    plan: TaskPlan | None
    iteration: int
    replans: int
    last_reflection_at: int
    reflection: Reflection | None
    loop_guard: LoopGuard | None
    cancelled: bool
    llm_error: str | None
    hook_error: HookFailure | None
    reading: RequestReading | None
    """What the request asks (read before any write); a refusal in it ends the run."""
    tool_decisions: dict[str, Decision]
    remaining_steps: RemainingSteps


class AgentState(RouteState, total=False):
    """State of the agent graph: the routers' channels and those only nodes read.

    Counters are reset by ``plan`` at the start of every run on the thread.
    """

    answer_only: bool
    memory_context: list[MemoryItem]
    outcome: LatestOutcome
    output: Output


class AskState(TypedDict, total=False):
    """State of the read-only ask graph."""

    messages: Messages
    trace: Trace
    usage: UsageTotal
    elapsed_s: Seconds
    run: RunInfo
    memory_context: list[MemoryItem]
    llm_error: str | None
    hook_error: HookFailure | None
    outcome: LatestOutcome
    output: Output


class ToolTask(TypedDict):
    """One tool call of the last AI message, as ``tool_node`` runs it.

    ``index`` is the call's position in the message; ``group`` names the group of calls it
    runs with.
    """

    tool_call: dict[str, Any]
    thought: str
    index: int
    group: str
    round: int
    run_id: str
    trace_id: str
    decision: NotRequired[Decision]
    time_left: NotRequired[float]
    """The run's remaining time budget when the group was sent (absent: no budget)."""
    seen: NotRequired[dict[str, list[JsonValue]]]
    """Ids and names the run has seen, by kind: a reference to anything else is refused."""
    request: NotRequired[str]
    reading: NotRequired[RequestReading]
    """What the request asks: a write call it does not back is refused."""
    """The user's request (a name it mentions counts as seen)."""
    failed: NotRequired[dict[str, dict[str, Any]]]
    """Calls that already failed, by signature: an identical call is not sent again."""


class ToolGroup(TypedDict):
    """Payload of one ``Send("tool_node", ...)``: calls that run together, in message order.

    One call, or several consecutive calls whose tools are all safe to run concurrently.
    """

    group: str
    calls: list[ToolTask]


class AskUpdate(TypedDict, total=False):
    """What a node of the ask graph writes: a partial update of :class:`AskState`.

    Values are what each channel's reducer takes (new messages, new trace steps, the usage
    of this node), or an ``Overwrite`` that replaces the channel's value.
    """

    messages: Sequence[BaseMessage]
    trace: Sequence[ReasoningStep] | Overwrite
    usage: Usage | Overwrite
    elapsed_s: float | Overwrite
    run: RunInfo
    memory_context: list[MemoryItem]
    llm_error: str | None
    hook_error: HookFailure | None
    outcome: NodeOutcome | None
    output: dict[str, Any]


class AgentUpdate(AskUpdate, total=False):
    """What a node of the agent graph writes: a partial update of :class:`AgentState`."""

    tool_time: ToolTime | Overwrite
    plan: TaskPlan | None
    iteration: int
    replans: int
    last_reflection_at: int
    reflection: Reflection | None
    loop_guard: LoopGuard | None
    cancelled: bool
    reading: RequestReading | None
    tool_decisions: dict[str, Decision]
    answer_only: bool


class ToolUpdate(TypedDict, total=False):
    """What ``tool_node`` writes for one call, or for its group of calls."""

    messages: list[BaseMessage]
    trace: list[ReasoningStep]
    usage: Usage
    tool_time: ToolTime
    hook_error: HookFailure | None
    outcome: NodeOutcome | None


__all__ = [
    "AgentState",
    "AgentUpdate",
    "AskState",
    "AskUpdate",
    "MemoryItem",
    "RouteState",
    "StopReason",
    "ToolGroup",
    "ToolTask",
    "ToolUpdate",
]
