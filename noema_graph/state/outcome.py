"""Typed outcomes of node results and of whole runs (seed 001, Contracts and Outcomes).

Every node's update carries a :class:`NodeOutcome` in the ``outcome`` channel and every
output contract carries the run's outcome, so callers branch on a type, never on text.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Outcome(StrEnum):
    """What a node result or a run amounts to.

    ========= ============================================================= ===== ======= ====
    outcome   meaning                                                       term. success loop
    ========= ============================================================= ===== ======= ====
    success   the node or run did its job                                         yes
    error     it failed and retrying will not help (model, hook error)      yes
    clarify   a question for the user is pending (or was answered)                        yes
    confirm   tool calls wait for (or got) the user's approval                            yes
    replan    the plan is being revised                                                   yes
    loop_back more work goes round the loop (tool calls, error observations)              yes
    terminate stopped on purpose: cancelled, loop detected, hook veto       yes
    skip      nothing to do (a limit, a refusal or a rejection passed it)
    partial   the run ended incomplete (a limit, or a result off-schema)    yes
    ========= ============================================================= ===== ======= ====
    """

    SUCCESS = "success"
    ERROR = "error"
    CLARIFY = "clarify"
    CONFIRM = "confirm"
    REPLAN = "replan"
    LOOP_BACK = "loop_back"
    TERMINATE = "terminate"
    SKIP = "skip"
    PARTIAL = "partial"

    @property
    def is_terminal(self) -> bool:
        """Return True when the run cannot go on after this outcome."""
        return self in _TERMINAL

    @property
    def is_success(self) -> bool:
        """Return True when the work was done as asked."""
        return self is Outcome.SUCCESS

    @property
    def requires_loop(self) -> bool:
        """Return True when the graph must go round again (after the user, for the HITL ones)."""
        return self in _LOOPING

    @property
    def requires_human(self) -> bool:
        """Return True when the outcome stands for a question or an approval of the user."""
        return self in (Outcome.CLARIFY, Outcome.CONFIRM)


_TERMINAL = frozenset({Outcome.ERROR, Outcome.TERMINATE, Outcome.PARTIAL})
_LOOPING = frozenset({Outcome.CLARIFY, Outcome.CONFIRM, Outcome.REPLAN, Outcome.LOOP_BACK})


class NodeOutcome(BaseModel):
    """The outcome of one node result: which node, what it amounts to, and a short why."""

    model_config = ConfigDict(frozen=True)

    node: str = Field(description="The node that produced the result.")
    outcome: str = Field(description="An Outcome value (kept as text in checkpoints).")
    detail: str = Field(default="", description="A short reason, e.g. 'tool calls: 2'.")

    @property
    def kind(self) -> Outcome:
        """Return the outcome as an :class:`Outcome`."""
        return Outcome(self.outcome)


FINISHED = "finished"
"""Detail of a final node's outcome when the run ended without an error code (else the code)."""
STOPPED_ON_PURPOSE = frozenset(
    {"cancelled", "loop_detected", "hook_veto", "not_found", "invalid_input", "forbidden"}
)
FAILED = frozenset({"llm_error", "hook_error"})


def run_outcome(*, success: bool, validated: bool | None, code: str | None) -> Outcome:
    """Return the outcome of a finished run from its output contract's fields.

    success -> SUCCESS (PARTIAL when the result did not match the output schema);
    cancelled, loop_detected, hook_veto, forbidden -> TERMINATE; llm_error, hook_error -> ERROR;
    the other limits (iterations, time, tokens, cost) -> PARTIAL.
    """
    if success:
        return Outcome.PARTIAL if validated is False else Outcome.SUCCESS
    if code in STOPPED_ON_PURPOSE:
        return Outcome.TERMINATE
    if code in FAILED:
        return Outcome.ERROR
    return Outcome.PARTIAL
