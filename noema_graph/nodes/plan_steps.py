"""Follow a plan's tool steps: which are done, which tools the next one offers, with what.

A step of an agent's default plan names its tool (or a choice of tools) and where its
arguments come from. :func:`steps_done` advances the plan over steps whose tool has since
succeeded, so finishing a tool step costs no model turn. :func:`planned_turn` works out the
current step's call: the tools it offers, each one's argument schema narrowed to what the
run has seen (:func:`~noema_graph.grounding.step_arguments`), and, when one tool remains and
every argument is determined, the call itself, which the graph then makes without the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool

from noema_graph.grounding import (
    MISSING,
    Seen,
    parse_source,
    references,
    resolve,
    seen_in,
    step_arguments,
)
from noema_graph.grounding.arguments import StepArguments
from noema_graph.grounding.reading import bound_calls, with_references, writes
from noema_graph.grounding.sources import REQUEST_SOURCES, from_request
from noema_graph.models.grammar import tool_args_schema
from noema_graph.nodes.common import preview
from noema_graph.nodes.routing import seen_so_far
from noema_graph.state.models import ReasoningStep, RequestReading, TaskPlan, TaskStep

PLANNED = "noema_planned_call"
"""``response_metadata`` key of the AI message of a determined plan step's call."""
STEP_RESULT_CHARS = 600
"""Characters of a tool result kept as the result of the plan step it completed."""


def _calls_of(trace: Sequence[ReasoningStep], tools: Sequence[str]) -> list[ReasoningStep]:
    return [
        s
        for s in trace
        if s.kind == "tool" and s.status == "ok" and s.action and s.action.tool in tools
    ]


def _tools(step: TaskStep) -> tuple[str, ...]:
    return tuple(t.strip() for t in (step.tool or "").split("|") if t.strip())


def _made(args: Mapping[str, object], trace: Sequence[ReasoningStep], tool: str) -> bool:
    """Return whether a call of ``tool`` in ``trace`` had the arguments ``args``.

    A failed or rejected call counts: the step does not wait on a call again.
    """
    return any(
        s.kind == "tool"
        and s.action is not None
        and s.action.tool == tool
        and all(s.action.input.get(k) == v for k, v in args.items())
        for s in trace
    )


def _unmade(
    tool: BaseTool, trace: Sequence[ReasoningStep], reading: RequestReading | None
) -> list[dict[str, Any]]:
    """Return the calls the reading binds for the write ``tool`` that have not succeeded yet."""
    if reading is None or not writes(tool):
        return []
    bound = bound_calls(tool_args_schema(tool), reading)
    return [b for b in bound if not _made(b, trace, tool.name)]


def holding(
    tools: Sequence[BaseTool], trace: Sequence[ReasoningStep], reading: RequestReading | None
) -> Callable[[TaskStep], bool]:
    """Return whether a step waits on calls the reading binds (one per record named)."""
    by_name = {t.name: t for t in tools}

    def pending(step: TaskStep) -> bool:
        names = _tools(step)
        return (
            len(names) == 1
            and names[0] in by_name
            and bool(
                _made_any(by_name[names[0]], trace) and _unmade(by_name[names[0]], trace, reading)
            )
        )

    return pending


def _made_any(tool: BaseTool, trace: Sequence[ReasoningStep]) -> bool:
    return bool(_calls_of(trace, (tool.name,)))


def steps_done(
    plan: TaskPlan,
    trace: Sequence[ReasoningStep],
    pending: Callable[[TaskStep], bool] | None = None,
) -> TaskPlan:
    """Return ``plan`` advanced over the tool steps whose tool succeeded since they began.

    A step counts as done when its tools have more successful calls than the completed
    steps before it that use them, and ``pending`` (a write step with references the
    request names and no call yet) does not hold it.
    """
    while (step := plan.current_step) is not None and step.tool:
        if pending is not None and pending(step):
            break
        tools = _tools(step)
        before = sum(
            1
            for s in plan.steps[: plan.current_step_index]
            if s.status == "completed" and set(_tools(s)) & set(tools)
        )
        calls = _calls_of(trace, tools)
        if len(calls) <= before:
            break
        plan = plan.advance(preview(calls[-1].observation or "", STEP_RESULT_CHARS))
    return plan


@dataclass(frozen=True)
class PlannedTurn:
    """The current tool step's offer: its tools, their narrowed schemas, a call if determined."""

    tools: list[BaseTool]
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    call: dict[str, Any] | None = None
    calls: tuple[dict[str, Any], ...] = ()
    """Every determined call of the turn (``call`` is the first); empty: just ``call``."""


def _given(step: TaskStep, request: str, trace: Sequence[ReasoningStep]) -> dict[str, Any]:
    given = dict(step.args)
    for name, text in step.sources.items():
        value = (
            from_request(text, request)
            if text in REQUEST_SOURCES
            else resolve(parse_source(text), trace)
        )
        if value is not MISSING:
            given[name] = value
    return given


def _unreferenced(arguments: StepArguments, seen: Seen) -> bool:
    """Return whether a required reference argument has nothing seen to refer to."""
    schema = arguments.schema
    required: set[str] = set(schema.get("required") or ())
    return any(
        name in required
        and name not in arguments.values
        and not (seen.ids.get(kind) or seen.names.get(kind))
        for name, kind in references(schema).items()
    )


def _anchored(tool: BaseTool, arguments: StepArguments, asked: Seen) -> set[str]:
    """Return the kinds of the records the request names that ``tool``'s arguments take."""
    return {
        kind
        for name, kind in references(tool_args_schema(tool)).items()
        if arguments.values.get(name) in asked.ids.get(kind, {})
    }


def narrowed(
    tools: Sequence[BaseTool],
    request: str,
    trace: Sequence[ReasoningStep],
    step: TaskStep | None = None,
    seen: tuple[Seen, Seen] | None = None,
) -> dict[str, StepArguments]:
    """Return each tool's arguments narrowed for this turn (see the module docstring).

    ``seen`` is (what the request holds, what the request and the trace hold) when the
    caller has read them already.
    """
    asked, known = seen or (seen_in(request), seen_so_far(request, trace))
    given = _given(step, request, trace) if step is not None else {}
    keep = (set(step.args) | set(step.sources) | set(step.offer)) if step is not None else None
    return {
        tool.name: step_arguments(
            tool_args_schema(tool), request, known, asked=asked, given=given, keep=keep
        )
        for tool in tools
    }


def _bound_turn(
    tool: BaseTool,
    step: TaskStep,
    request: str,
    trace: Sequence[ReasoningStep],
    reading: RequestReading,
    seen: tuple[Seen, Seen],
) -> PlannedTurn:
    """Return a write step's turn with its references bound from the reading.

    Every call the reading binds whose other arguments are determined is made at once
    (two cards named, two calls); else the model fills the next binding's other arguments,
    one call per turn, until each binding has its call.
    """
    asked, known = seen
    given = _given(step, request, trace)
    keep = set(step.args) | set(step.sources) | set(step.offer)
    schema = tool_args_schema(tool)
    todo = _unmade(tool, trace, reading) or [{}]
    narrowed = [
        step_arguments(schema, request, known, asked=asked, given={**given, **b}, keep=keep)
        for b in todo
    ]
    if all(a.complete for a in narrowed):
        calls = [
            {"name": tool.name, "args": a.values, "id": f"plan_{uuid4().hex[:12]}"}
            for a in narrowed
        ]
        return PlannedTurn([tool], {tool.name: narrowed[0].schema}, calls[0], tuple(calls))
    return PlannedTurn([tool], {tool.name: narrowed[0].schema})


def planned_turn(
    step: TaskStep,
    tools: Sequence[BaseTool],
    request: str,
    trace: Sequence[ReasoningStep],
    reading: RequestReading | None = None,
) -> PlannedTurn:
    """Return what the current tool step offers, and its call when nothing is left to choose.

    Of a choice of tools, those with a required reference that has nothing seen to refer to
    drop out (unless none would remain); when the request names a record (``card 33``) that
    some tools take and others do not, those that take it are kept.
    """
    names = _tools(step)
    offered = [t for t in tools if t.name in names]
    if not offered:
        return PlannedTurn([])
    asked = with_references(seen_in(request), reading)
    seen = with_references(seen_so_far(request, trace), reading)
    arguments = narrowed(offered, request, trace, step, (asked, seen))
    usable = [t for t in offered if not _unreferenced(arguments[t.name], seen)] or offered
    kinds = {t.name: _anchored(t, arguments[t.name], asked) for t in usable}
    shared = set[str].intersection(*kinds.values()) if kinds else set[str]()
    usable = [t for t in usable if kinds[t.name] - shared] or usable
    schemas = {t.name: arguments[t.name].schema for t in usable}
    if len(usable) == 1 and reading is not None and writes(usable[0]):
        return _bound_turn(usable[0], step, request, trace, reading, (asked, seen))
    if len(usable) == 1 and arguments[usable[0].name].complete:
        name = usable[0].name
        call = {"name": name, "args": arguments[name].values, "id": f"plan_{uuid4().hex[:12]}"}
        return PlannedTurn(usable, schemas, call)
    return PlannedTurn(usable, schemas)


def referenced_reads(
    tools: Sequence[BaseTool], reading: RequestReading, planned: Sequence[TaskStep] = ()
) -> list[TaskStep]:
    """Return a read step per record the reading links that a read tool takes by reference.

    A question about a record (``is card 42 filed right?``) is answered from that record:
    each read tool whose only required reference is of the record's kind reads it
    (``get_card`` with ``card_id=42``), unless a ``planned`` step already makes that call.
    """
    steps: list[TaskStep] = []
    made = {(s.tool, json.dumps(s.args, sort_keys=True, default=str)) for s in planned}
    for tool in tools:
        if writes(tool):
            continue
        schema = tool_args_schema(tool)
        required: set[str] = set(schema.get("required") or ())
        refs = {n: k for n, k in references(schema).items() if n in required}
        if len(refs) != 1 or required - set(refs):
            continue
        ((name, kind),) = refs.items()
        for value in reading.values(kind):
            args = {name: value}
            call = (tool.name, json.dumps(args, sort_keys=True, default=str))
            if call in made:
                continue
            made.add(call)
            steps.append(TaskStep(description=f"Read {kind} {value}.", tool=tool.name, args=args))
    return steps


def planned_call_message(
    step: TaskStep, call: Mapping[str, Any], more: Sequence[Mapping[str, Any]] = ()
) -> AIMessage:
    """Return the AI message that makes a determined plan step's calls, without the model."""
    calls = [dict(c) for c in more] or [dict(call)]
    shown = "; ".join(
        f"{c['name']}({json.dumps(c['args'], default=str, sort_keys=True)})" for c in calls
    )
    thought = f"{step.description} Every argument is determined: {shown}."
    return AIMessage(
        content=thought,
        tool_calls=calls,
        response_metadata={PLANNED: True},
    )


def planned(message: AIMessage) -> bool:
    """Return whether ``message`` is a plan step's call the graph made without the model."""
    return bool(message.response_metadata.get(PLANNED))


def spread_calls(
    message: AIMessage,
    tools: Sequence[BaseTool],
    trace: Sequence[ReasoningStep],
    reading: RequestReading | None,
) -> AIMessage:
    """Return ``message`` with one call per record the request names, from the model's one.

    A model that makes one write call for the first of several records the reading binds
    (``cards 40 and 41``) wrote the other arguments (a flag's reason) for all of them: the
    same call is made for each record left, so a one-call agent needs no turn per record.
    """
    if reading is None or len(message.tool_calls) != 1:
        return message
    call = message.tool_calls[0]
    tool = next((t for t in tools if t.name == call["name"]), None)
    if tool is None or not writes(tool):
        return message
    todo = _unmade(tool, trace, reading)
    if len(todo) < 2 or any(call["args"].get(k) != v for k, v in todo[0].items()):
        return message
    more = [
        {**call, "args": {**call["args"], **bound}, "id": f"{call['id']}_{index}"}
        for index, bound in enumerate(todo[1:], 1)
    ]
    return message.model_copy(update={"tool_calls": [call, *more]})
