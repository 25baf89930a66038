"""What the graph asks a person, and what the person answers (human in the loop).

A paused run carries one of these requests as its ``interrupt()`` value; the caller resumes
with ``Command(resume=...)`` on the same thread. Requests and decisions are plain pydantic
models so the same classes validate a caller's answer and live in checkpoints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from noema_graph.errors import HumanInputError


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ClarifyRequest(_Frozen):
    """The model needs information only the user has: answer with a string."""

    type: Literal["clarify"] = "clarify"
    call_id: str = Field(description="The ask_user call this question came from.")
    question: str = Field(description="The question, as the model asked it.")


class PendingCall(_Frozen):
    """A tool call that waits for approval, exactly as it would run."""

    id: str = Field(description="Tool call id; key your decision by it.")
    name: str = Field(description="Tool name.")
    args: dict[str, Any] = Field(default_factory=dict, description="Arguments it would run with.")
    reason: str = Field(description="Why approval is needed (tool name, permission, effect).")


class ConfirmRequest(_Frozen):
    """Tool calls of one step wait for approval: answer with one decision per call."""

    type: Literal["confirm"] = "confirm"
    calls: tuple[PendingCall, ...] = Field(description="Every call that needs a decision.")
    error: str | None = Field(
        default=None, description="Why the previous answer was refused, when it was."
    )


class Decision(_Frozen):
    """A person's decision on one pending tool call."""

    action: Literal["approve", "reject", "edit"] = Field(
        description="approve: run as is; reject: do not run; edit: run with new args."
    )
    args: dict[str, Any] | None = Field(
        default=None, description="For edit: the arguments to run with instead."
    )
    reason: str = Field(default="", description="For reject: why (the model reads it).")


HUMAN_MODELS: tuple[type[BaseModel], ...] = (ClarifyRequest, PendingCall, ConfirmRequest, Decision)


DECISION_FIX = (
    "resume with 'approve', 'reject', {'action': 'edit', 'args': {...}}, or a dict mapping "
    "every pending call id to one of those"
)


def _decision(value: object, field: str) -> Decision:
    if isinstance(value, Decision):
        return value
    if isinstance(value, str):
        value = {"action": value.strip().lower()}
    if not isinstance(value, Mapping):
        raise HumanInputError(field, f"expected a decision, got {value!r}", fix=DECISION_FIX)
    try:
        decision = Decision.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        name = f"{field}.{where}" if where else field
        raise HumanInputError(name, first["msg"], fix=DECISION_FIX) from None
    if decision.action == "edit" and decision.args is None:
        raise HumanInputError(
            f"{field}.args",
            "an edit needs the new arguments",
            fix="pass {'action': 'edit', "
            "'args': {...}} with the full arguments the call should run with",
        )
    return decision


def parse_decisions(answer: object, pending: Sequence[PendingCall]) -> dict[str, Decision]:
    """Read the caller's resume value into one decision per pending call.

    Accepted: one decision for every call ("approve", "reject", a Decision or its dict), a
    list in the order of the request, or a dict keyed by call id. Raises
    :class:`HumanInputError` naming the offending field.
    """
    ids = [p.id for p in pending]
    if isinstance(answer, Mapping) and "action" not in answer:
        by_id: Mapping[object, object] = answer
        unknown = [str(k) for k in by_id if k not in ids]
        if unknown:
            raise HumanInputError(
                f"resume[{unknown[0]!r}]",
                f"no pending call has this id; pending ids: {ids}",
                fix="key the decisions by the ids of the ConfirmRequest's calls",
            )
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise HumanInputError(
                f"resume[{missing[0]!r}]",
                "no decision for this pending call",
                fix="answer every pending call in one resume",
            )
        return {i: _decision(by_id[i], f"resume[{i!r}]") for i in ids}
    if isinstance(answer, list | tuple):
        items: Sequence[object] = answer
        if len(items) != len(ids):
            raise HumanInputError(
                "resume",
                f"{len(items)} decisions for {len(ids)} pending calls",
                fix="give one decision per pending call, in the request's order",
            )
        return {
            i: _decision(v, f"resume[{n}]") for n, (i, v) in enumerate(zip(ids, items, strict=True))
        }
    one = _decision(answer, "resume")
    if one.action == "edit" and len(ids) > 1:
        raise HumanInputError(
            "resume", "one edit cannot apply to several calls", fix="key the edits by call id"
        )
    return dict.fromkeys(ids, one)
