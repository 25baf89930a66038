"""Answer runs paused for a person: read what they wait for, resume with the answers.

A run pauses (LangGraph ``interrupt()``) when the model calls ``ask_user`` (clarify) or a
tool call needs approval (confirm). The checkpoint holds the pause, so the answer may come
from another process, days later, as long as the same thread and checkpointer are used.

Example:
    >>> graph.invoke({"messages": [("user", "tidy my deck")]}, config)  # doctest: +SKIP
    >>> for p in pending(graph, config):  # doctest: +SKIP
    ...     print(p.request)
    >>> graph.invoke(resume_with(graph, config, {"call_1": approve()}), config)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Interrupt, StateSnapshot

from noema_graph.config import AgentConfig
from noema_graph.errors import HumanInputError
from noema_graph.nodes.output import build_output
from noema_graph.state.human import ClarifyRequest, ConfirmRequest, Decision, parse_decisions
from noema_graph.state.output import AgentOutput

HumanRequest = ClarifyRequest | ConfirmRequest


@dataclass(frozen=True)
class Pending:
    """One open request of a paused run: its interrupt id and what it asks."""

    interrupt_id: str
    request: HumanRequest


def approve() -> Decision:
    """Return the decision to run a call as it is."""
    return Decision(action="approve")


def reject(reason: str = "") -> Decision:
    """Return the decision not to run a call; the model reads ``reason``."""
    return Decision(action="reject", reason=reason)


def edit(args: Mapping[str, object]) -> Decision:
    """Return the decision to run a call with ``args`` instead."""
    return Decision(action="edit", args=dict(args))


def _request(value: object) -> HumanRequest | None:
    if isinstance(value, Mapping):
        kind = value.get("type")
        if kind == "clarify":
            return ClarifyRequest.model_validate(value)
        if kind == "confirm":
            return ConfirmRequest.model_validate(value)
    return None


def pending_of(interrupts: Sequence[Interrupt]) -> list[Pending]:
    """Return the clarify and confirm requests among ``interrupts`` (others are skipped)."""
    found: list[Pending] = []
    for item in interrupts:
        request = _request(item.value)
        if request is not None:
            found.append(Pending(interrupt_id=item.id, request=request))
    return found


def pending(graph: Any, config: RunnableConfig) -> list[Pending]:
    """Return what the paused run on ``config``'s thread waits for (empty when not paused)."""
    snapshot: StateSnapshot = graph.get_state(config)
    return pending_of(snapshot.interrupts)


def check_answer(request: HumanRequest, answer: object) -> object:
    """Validate ``answer`` for ``request``; raise :class:`HumanInputError` naming the field.

    A clarify answer must be text; a confirm answer is read as in ``parse_decisions``. Returns
    the value to resume with (decisions as plain dicts, ready for a checkpoint).
    """
    if isinstance(request, ClarifyRequest):
        if not isinstance(answer, str):
            raise HumanInputError(
                "resume",
                f"a clarify answer must be text, got {type(answer).__name__}",
                fix=f"answer the question {request.question!r} with a string",
            )
        return answer
    decisions = parse_decisions(answer, request.calls)
    return {i: d.model_dump(mode="json") for i, d in decisions.items()}


def resume_with(graph: Any, config: RunnableConfig, answers: object) -> Command[Any]:
    """Return the ``Command`` that resumes the paused run with ``answers``.

    With one open request, ``answers`` is its answer; with several, a dict keyed by interrupt
    id. Every answer is validated first, so a bad one raises :class:`HumanInputError` and
    the checkpoint is left untouched.
    """
    open_requests = pending(graph, config)
    if not open_requests:
        raise HumanInputError(
            "thread", "the run is not paused", fix="resume with graph.invoke(None, config)"
        )
    if len(open_requests) == 1:
        only = open_requests[0]
        return Command(resume={only.interrupt_id: check_answer(only.request, answers)})
    if not isinstance(answers, Mapping):
        raise HumanInputError(
            "resume",
            f"{len(open_requests)} requests are open",
            fix="pass a dict mapping each interrupt id to its answer",
        )
    by_id: Mapping[object, object] = answers
    values: dict[str, object] = {}
    for item in open_requests:
        if item.interrupt_id not in by_id:
            raise HumanInputError(
                f"resume[{item.interrupt_id!r}]",
                "no answer for this open request",
                fix="answer every open request in one resume",
            )
        values[item.interrupt_id] = check_answer(item.request, by_id[item.interrupt_id])
    return Command(resume=values)


def answer_with(
    graph: Any, config: RunnableConfig, respond: Callable[[HumanRequest], object]
) -> Command[Any] | None:
    """Return the resume ``Command`` with ``respond``'s answer to every open request.

    None when the run is not paused. ``respond`` is called once per request, in order.
    """
    open_requests = pending(graph, config)
    if not open_requests:
        return None
    return Command(
        resume={p.interrupt_id: check_answer(p.request, respond(p.request)) for p in open_requests}
    )


__all__ = [
    "ClarifyRequest",
    "ConfirmRequest",
    "Decision",
    "HumanRequest",
    "Pending",
    "answer_with",
    "approve",
    "check_answer",
    "edit",
    "paused_output",
    "pending",
    "pending_of",
    "reject",
    "resume_with",
]


def paused_output(
    values: Mapping[str, object], open_requests: Sequence[Pending], config: AgentConfig
) -> AgentOutput:
    """Return the output contract of a run paused for the user.

    ``success`` is False, ``outcome`` is ``clarify`` or ``confirm`` (confirm when any call
    waits for approval) and ``interrupts`` lists the open requests with their interrupt id.
    """
    kinds = {p.request.type for p in open_requests}
    output = build_output(
        values,
        config,
        result=None,
        validated=None,
        reason=None,
    )
    return output.model_copy(
        update={
            "success": False,
            "error": None,  # not finished: nothing is wrong with it yet
            "outcome": "confirm" if "confirm" in kinds else "clarify",
            "interrupts": [
                {"id": p.interrupt_id, **p.request.model_dump(mode="json")} for p in open_requests
            ],
        }
    )
