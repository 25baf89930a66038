"""Hallucinated actions: effects the agent claims that no successful tool call backs.

The final answer and the agent's thoughts are read for claimed effects (created, saved,
scheduled, flagged, sent, deleted, moved, recorded, updated, linked, ingested; any tense,
active or passive; negated, modal, conditional and questioned forms are not claims), and a
structured result's claim fields (``card_ids``, ``flagged``, ``moves``, ``links``,
``source_id``...) are read as claims too. A claim is backed when a successful call of a
tool performing that action touched every object the claim names (the card, deck, file,
concept or id must be the one the call touched) and as many objects as it counts. A
thought is only backed by calls made before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.evals.claims.backing import (
    Call,
    field_objects,
    known_names,
    make_call,
    unbacked,
)
from noema_graph.evals.claims.extract import Claim, claims_in, sentences
from noema_graph.evals.trajectory import Trajectory

FIELD_CLAIMS: dict[str, str] = {
    "card_ids": "create",
    "created": "create",
    "created_ids": "create",
    "flagged": "flag",
    "moves": "move",
    "moved": "move",
    "links": "link",
    "deleted": "delete",
    "removed": "delete",
    "updated": "update",
    "scheduled": "schedule",
    "sent": "send",
    "source_id": "ingest",
}
"""Keys of a structured result that claim an effect on the objects they hold."""

CHECKED_KINDS = frozenset({"thought", "tool", "hallucinated_action", "reflection"})
"""Trace kinds whose thoughts are the model's words (plans are intentions, errors ours)."""


class Finding(BaseModel):
    """A claimed effect no successful tool call backs."""

    model_config = ConfigDict(frozen=True)

    source: Literal["final_output", "thought"] = Field(description="Where the claim was made.")
    step: int | None = Field(default=None, description="Index of the step (thoughts).")
    text: str = Field(description="The sentence (or result field) making the claim.")
    action: str = Field(description="The claimed action: create, flag, move, send...")
    objects: list[str] = Field(default_factory=list[str], description="What it names.")
    reason: str = Field(description="Why no call backs it.")


def _objects(claim: Claim) -> list[str]:
    return [f"{kind} {value}" for kind, value in claim.ids] + list(claim.paths) + list(claim.names)


def _finding(
    claim: Claim, reason: str, source: Literal["final_output", "thought"], step: int | None
) -> Finding:
    return Finding(
        source=source,
        step=step,
        text=claim.text[:300],
        action=claim.action,
        objects=_objects(claim),
        reason=reason,
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]  # pyright: ignore[reportUnknownVariableType] -- JSON object
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]  # pyright: ignore[reportUnknownVariableType] -- JSON array
    return []


def _field_claims(output: Mapping[str, Any]) -> list[Claim]:
    claims: list[Claim] = []
    for key, action in FIELD_CLAIMS.items():
        value = output.get(key)
        if value in (None, [], {}, "", False) or isinstance(value, bool):
            continue
        touched = field_objects(key, value, output)
        claims.append(
            Claim(
                action=action,
                text=f"{key}: {str(value)[:200]}",
                ids=tuple(sorted(touched.ids)),
                names=tuple(sorted(touched.names)),
            )
        )
    return claims


def output_claims(final_output: Any) -> list[Claim]:
    """Return the claims of a final output: its claim fields and the effects its text claims."""
    claims = _field_claims(final_output) if isinstance(final_output, dict) else []
    for text in _strings(final_output):
        claims += claims_in(text)
    return claims


def _check(
    claims: list[Claim],
    calls: list[Call],
    names: set[str],
    source: Literal["final_output", "thought"],
    step: int | None,
) -> list[Finding]:
    found: list[Finding] = []
    for claim in claims:
        if (reason := unbacked(claim, calls, names)) is not None:
            found.append(_finding(claim, reason, source, step))
    return found


def hallucinated_actions(trajectory: Trajectory) -> list[Finding]:
    """Return the claimed effects of ``trajectory`` that no successful tool call backs.

    Thoughts are read in the steps whose kind (``metadata["step_kinds"]``, when recorded)
    is the model's own words; the final output is always read.
    """
    calls = [
        make_call(i, s.action.tool, s.action.input, s.observation, s.error)
        for i, s in enumerate(trajectory.steps)
        if s.action is not None
    ]
    names = known_names(calls)
    kinds: list[str | None] = list(trajectory.metadata.get("step_kinds") or [])
    found: list[Finding] = []
    for index, step in enumerate(trajectory.steps):
        kind = kinds[index] if index < len(kinds) else None
        if not step.thought or (kind is not None and kind not in CHECKED_KINDS):
            continue
        before = [c for c in calls if c.index < index]
        found += _check(claims_in(step.thought), before, names, "thought", index)
    found += _check(output_claims(trajectory.final_output), calls, names, "final_output", None)
    return list({(f.source, f.step, f.text, f.reason): f for f in found}.values())


__all__ = ["Claim", "Finding", "claims_in", "hallucinated_actions", "output_claims", "sentences"]
