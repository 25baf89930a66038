"""Hallucinated actions: effects the agent claims that no successful tool call backs.

The final answer and the agent's thoughts are read for claimed effects (created, saved,
scheduled, flagged, sent, deleted, moved, recorded, updated, linked, ingested; any tense,
active or passive; negated, modal, conditional and questioned forms are not claims), and a
structured result's claim fields (``card_ids``, ``flagged``, ``moves``, ``links``,
``source_id``...) are read as claims too. A claim is backed when a successful call of a
tool performing that action touched every object the claim names (the card, deck, file,
concept or id must be the one the call touched) and as many objects as it counts. A
thought is only backed by calls made before it.

What a tool does is read from the tool itself (see :mod:`.backing`): its name, its
description and the values its calls were given and returned. A trajectory recorded by the
runner carries its tools in ``metadata["tools"]`` (a JSON trajectory may carry ``tools``);
``tools=`` supplies them otherwise; without any, the names of the tools called are used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from noema_graph.claims import lexicon as lx
from noema_graph.claims.backing import (
    Call,
    ToolInfo,
    add_aliases,
    field_objects,
    known_names,
    make_call,
    records,
    tool_info,
    unbacked,
)
from noema_graph.claims.extract import Claim, claims_in, sentences
from noema_graph.trajectory.schema import Trajectory, TrajectoryStep, load_json

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


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _field_claims(output: Mapping[str, object]) -> list[Claim]:
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


def output_claims(final_output: object) -> list[Claim]:
    """Return the claims of a final output: its claim fields and the effects its text claims."""
    claims = _field_claims(final_output) if isinstance(final_output, dict) else []
    for text in _strings(final_output):
        claims += claims_in(text)
    return claims


class _Run:
    """What every claim of a run is checked against."""

    def __init__(self, calls: list[Call], infos: Mapping[str, ToolInfo]) -> None:
        self.calls = calls
        self.names = known_names(calls)
        self.infos = infos
        self.values = {v for call in calls for v in call.values}


def _check(
    claims: list[Claim],
    run: _Run,
    before: int | None,
    source: Literal["final_output", "thought"],
    step: int | None,
) -> list[Finding]:
    calls = run.calls if before is None else [c for c in run.calls if c.index < before]
    found: list[Finding] = []
    for claim in claims:
        reason = unbacked(
            claim, calls, run.names, tool_nouns=_nouns(run.infos, claim), values_seen=run.values
        )
        if reason is not None:
            found.append(_finding(claim, reason, source, step))
    return found


def _nouns(infos: Mapping[str, ToolInfo], claim: Claim) -> frozenset[str]:
    """Return what the tools that could perform the claimed action work on."""
    backing = lx.EFFECTS if claim.action == "any" else lx.BACKED_BY[claim.action]
    return frozenset(n for info in infos.values() if info.actions & backing for n in info.nouns)


def _spec(tool: object) -> tuple[str, str] | None:
    """Return (name, description) of a tool given as a dict, an OpenAI tool or a BaseTool."""
    if isinstance(tool, Mapping):
        fields: Mapping[str, Any] = tool
        fields = fields.get("function", fields)
        if isinstance(fields.get("name"), str):
            return str(fields["name"]), str(fields.get("description") or "")
        return None
    name, description = getattr(tool, "name", None), getattr(tool, "description", "")
    return (name, str(description or "")) if isinstance(name, str) else None


def tool_infos(trajectory: Trajectory, tools: object = None) -> dict[str, ToolInfo]:
    """Return what each tool does, from ``tools``, the trajectory's tools, or the names called.

    ``tools``: a list of tool dicts (``{"name", "description", "parameters"}``, OpenAI's
    ``{"type": "function", "function": {...}}``) or LangChain tools, or a mapping of name to
    JSON schema (its ``description`` read).
    """
    given = tools
    if given is None:
        given = trajectory.metadata.get("tools") or (trajectory.model_extra or {}).get("tools")
    specs: list[tuple[str, str]] = []
    if isinstance(given, Mapping):
        mapping: Mapping[str, Any] = given
        for name, schema in mapping.items():
            text = schema.get("description", "") if isinstance(schema, Mapping) else ""
            specs.append((str(name), str(text)))
    elif isinstance(given, Sequence) and not isinstance(given, str):
        listed: list[object] = list(given)
        specs = [spec for tool in listed if (spec := _spec(tool)) is not None]
    infos = {name: tool_info(name, description) for name, description in specs}
    for step in trajectory.steps:
        if step.action is not None and step.action.tool not in infos:
            infos[step.action.tool] = tool_info(step.action.tool)
    return infos


def hallucinated_actions(trajectory: Trajectory, tools: object = None) -> list[Finding]:
    """Return the claimed effects of ``trajectory`` that no successful tool call backs.

    Thoughts are read in the steps whose kind (``metadata["step_kinds"]``, when recorded)
    is the model's own words; the final output is always read.

    Args:
        trajectory: The run.
        tools: The run's tools (see :func:`tool_infos`); None: the trajectory's own
            (``metadata["tools"]`` or ``tools``), else the names of the tools it called.
    """
    infos = tool_infos(trajectory, tools)
    calls = [
        make_call(i, s.action.tool, s.action.input, s.observation, s.error, infos[s.action.tool])
        for i, s in enumerate(trajectory.steps)
        if s.action is not None
    ]
    known = [r for s in trajectory.steps if s.action is not None for r in _records(s)]
    add_aliases(calls, known)
    run = _Run(calls, infos)
    kinds: list[str | None] = list(trajectory.metadata.get("step_kinds") or [])
    found: list[Finding] = []
    for index, step in enumerate(trajectory.steps):
        kind = kinds[index] if index < len(kinds) else None
        if not step.thought or (kind is not None and kind not in CHECKED_KINDS):
            continue
        found += _check(claims_in(step.thought), run, index, "thought", index)
    found += _check(output_claims(trajectory.final_output), run, None, "final_output", None)
    return list({(f.source, f.step, f.text, f.reason): f for f in found}.values())


def _records(step: TrajectoryStep) -> list[tuple[set[str], set[str]]]:
    if step.error is not None or not step.observation:
        return []
    return records(load_json(step.observation))


__all__ = ["Claim", "Finding", "claims_in", "hallucinated_actions", "output_claims", "sentences"]
