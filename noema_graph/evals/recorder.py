"""Record trajectories from a finished state or from a thread's checkpoints.

Every trace entry but the final one becomes a step, in execution order; the final answer is
``final_output``. A tool step's ``observation`` is the tool's full output (JSON), not the
shortened text the model read. ``metadata`` keeps what the format has no field for:
``step_kinds`` and ``step_rounds`` (aligned with ``steps``), the agent, model, stop reason,
success, validation, iterations and run time, and the tools' names, descriptions and argument
schemas when the state's run names them. A tool step's ``message_index`` is the position, in
the thread's messages, of the model message that made the call (read from the checkpoint's
messages by call id), so calls made together share it. :meth:`TrajectoryRecorder.replay`
rebuilds a run offline from them.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph

from noema_graph.evals.replay import ReplayChatModel
from noema_graph.state.agent import AgentState
from noema_graph.state.models import ReasoningStep, RunInfo, Usage
from noema_graph.tools.results import SUBAGENT_OUTPUT
from noema_graph.trajectory.schema import Trajectory, TrajectoryStep, TrajectoryUsage
from noema_graph.trajectory.steps import SKIPPED_KINDS, step_of


def _usage(state: Mapping[str, Any], output: Mapping[str, Any]) -> TrajectoryUsage:
    meta = output.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("token_usage"), dict):
        return TrajectoryUsage(**meta["token_usage"], cost_usd=meta.get("estimated_cost_usd"))
    usage = state.get("usage") or Usage()
    return TrajectoryUsage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        cost_usd=usage.cost_usd,
    )


def _metadata(
    state: Mapping[str, Any], output: Mapping[str, Any], kept: Sequence[ReasoningStep]
) -> dict[str, Any]:
    meta: dict[str, Any] = dict(output.get("metadata") or {})
    run: RunInfo | None = state.get("run")
    return {
        "agent": meta.get("agent_name"),
        "model": meta.get("model") or (run.model if run else None),
        "run_id": run.run_id if run else None,
        "trace_id": meta.get("trace_id") or (run.trace_id if run else None),
        "success": output.get("success"),
        "validated": output.get("validated"),
        "stop_reason": meta.get("stop_reason"),
        "error": (output.get("error") or {}).get("code"),
        "store_candidates": _store_candidates(output),
        "iterations": meta.get("iterations", state.get("iteration")),
        "execution_time_ms": meta.get("execution_time_ms"),
        "confidence": (output.get("reasoning") or {}).get("confidence"),
        "step_kinds": [s.kind for s in kept],
        "step_rounds": [s.round for s in kept],
        "subagent_outputs": _subagent_outputs(kept),
    }


def _store_candidates(output: Mapping[str, Any]) -> list[str]:
    """Return the records a refusal names from the store (``error.details.candidates``).

    The request reader reads them from the learning store itself, not through a tool, so
    the words check counts them as data (:mod:`noema_graph.evals.words`).
    """
    details = (output.get("error") or {}).get("details")
    found = details.get("candidates") if isinstance(details, dict) else None
    return [str(c) for c in found] if isinstance(found, list) else []


def _subagent_outputs(kept: Sequence[ReasoningStep]) -> dict[str, object]:
    """Return the output contract of every subagent call, keyed by the step's position."""
    found: dict[str, object] = {}
    for index, step in enumerate(kept):
        output = step.action.output if step.action is not None else None
        if isinstance(output, dict) and isinstance(output.get(SUBAGENT_OUTPUT), dict):
            found[str(index)] = output[SUBAGENT_OUTPUT]
    return found


def _message_indexes(state: Mapping[str, Any]) -> dict[str, int]:
    """Return the position of the model message that made each tool call, by call id."""
    found: dict[str, int] = {}
    for index, message in enumerate(state.get("messages") or []):
        for call in getattr(message, "tool_calls", None) or []:
            if call.get("id"):
                found[str(call["id"])] = index
    return found


def _steps(state: Mapping[str, Any], kept: Sequence[ReasoningStep]) -> list[TrajectoryStep]:
    """Return the steps of ``kept``, each call with the index of the message that made it."""
    indexes = _message_indexes(state)
    steps: list[TrajectoryStep] = []
    for entry in kept:
        step = step_of(entry)
        if entry.call_id is not None and entry.call_id in indexes:
            step = step.model_copy(update={"message_index": indexes[entry.call_id]})
        steps.append(step)
    return steps


def _not_pending_sends(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Ignoring unknown node name")


@contextmanager
def _quiet_pending_sends() -> Generator[None]:
    """Drop LangGraph's warning about the agent's nodes, unknown to the reading graph."""
    langgraph_logger = logging.getLogger("langgraph")
    langgraph_logger.addFilter(_not_pending_sends)
    try:
        yield
    finally:
        langgraph_logger.removeFilter(_not_pending_sends)


def _reader(saver: BaseCheckpointSaver[Any]) -> Any:
    """Return a graph over the agent state schema that only reads ``saver``'s threads."""

    def noop(state: AgentState) -> dict[str, object]:
        return {}

    builder = StateGraph(AgentState)
    builder.add_node("noop", noop)
    builder.add_edge(START, "noop")
    builder.add_edge("noop", END)
    return builder.compile(checkpointer=saver)


def _turn_key(values: Mapping[str, Any]) -> str | None:
    """Return which user turn a snapshot belongs to, or None when it ends no turn.

    A turn that planned carries its run id; one stopped before the plan (a refusal of the
    request, a hook's veto) has none, so its request's message id names it, once the turn
    has an output.
    """
    run: RunInfo | None = values.get("run")
    if run is not None:
        return run.run_id
    if not values.get("output"):
        return None
    asked = [m for m in values.get("messages") or () if isinstance(m, HumanMessage)]
    return f"request:{asked[-1].id}" if asked else "request"


class TrajectoryRecorder:
    """Turn agent states and checkpointed threads into :class:`Trajectory` objects."""

    @staticmethod
    def from_state(state: Mapping[str, Any]) -> Trajectory:
        """Return the trajectory of the run whose final (or latest) state is ``state``."""
        trace: list[ReasoningStep] = list(state.get("trace") or [])
        kept = [s for s in trace if s.kind not in SKIPPED_KINDS]
        output: Mapping[str, Any] = state.get("output") or {}
        run: RunInfo | None = state.get("run")
        return Trajectory(
            input=run.request if run is not None else "",
            final_output=output.get("result"),
            steps=_steps(state, kept),
            usage=_usage(state, output),
            metadata=_metadata(state, output, kept),
        )

    @staticmethod
    def from_thread(
        source: BaseCheckpointSaver[Any] | Any,
        thread_id: str,
        *,
        turns: Literal["each", "whole"] = "each",
    ) -> list[Trajectory]:
        """Return the trajectories of thread ``thread_id``, oldest turn first.

        Args:
            source: A checkpointer (the thread is read through a graph over the agent state
                schema), or a compiled graph with that checkpointer.
            thread_id: The thread.
            turns: ``each``: one trajectory per user turn (run); ``whole``: one trajectory
                of the whole thread, its steps and usage summed over the turns.
        """
        graph = _reader(source) if isinstance(source, BaseCheckpointSaver) else source
        config = {"configurable": {"thread_id": thread_id}}
        last: dict[str, Mapping[str, Any]] = {}
        with _quiet_pending_sends():
            for snapshot in graph.get_state_history(config):
                key = _turn_key(snapshot.values)
                if key is not None and key not in last:
                    last[key] = snapshot.values  # history is newest first
        per_turn = [TrajectoryRecorder.from_state(v) for v in reversed(last.values())]
        if turns == "each" or not per_turn:
            return per_turn
        return [_whole(per_turn)]

    @staticmethod
    def to_json(trajectory: Trajectory, *, indent: int | None = None) -> str:
        """Serialise ``trajectory`` to JSON."""
        return trajectory.to_json(indent=indent)

    @staticmethod
    def from_json(text: str | bytes) -> Trajectory:
        """Parse a trajectory written by :meth:`to_json` (or by another tool)."""
        return Trajectory.from_json(text)

    @staticmethod
    def replay(trajectory: Trajectory) -> BaseChatModel:
        """Return a chat model that re-emits the recorded model outputs of ``trajectory``.

        Building the same agent with it and sending the same request runs the same tool
        calls and ends with the same output, offline. See :class:`ReplayChatModel`.
        """
        return ReplayChatModel.from_trajectory(trajectory)


def _whole(turns: list[Trajectory]) -> Trajectory:
    kinds: list[str] = []
    rounds: list[int] = []
    for turn in turns:
        kinds += turn.metadata.get("step_kinds", [])
        rounds += turn.metadata.get("step_rounds", [])
    costs = [t.usage.cost_usd for t in turns]
    usage = TrajectoryUsage(
        prompt_tokens=sum(t.usage.prompt_tokens for t in turns),
        completion_tokens=sum(t.usage.completion_tokens for t in turns),
        total_tokens=sum(t.usage.total_tokens for t in turns),
        cost_usd=None if None in costs else sum(c or 0.0 for c in costs),
    )
    return Trajectory(
        input="\n\n".join(t.input for t in turns),
        final_output=turns[-1].final_output,
        steps=[s for t in turns for s in t.steps],
        usage=usage,
        metadata={
            **turns[-1].metadata,
            "turns": len(turns),
            "inputs": [t.input for t in turns],
            "step_kinds": kinds,
            "step_rounds": rounds,
            "subagent_outputs": {},
        },
    )
