"""Catch a ReAct call that only feeds a tool its own result, and answer with that result.

Measured on the embedded 135M model with the README quick start ("Use the add tool to add 2
and 3."): after ``add(2, 3) = 5`` it calls ``add(5, 3)``, ``add(8, 3)``... until
``max_iterations``, or repeats ``add(2, 3)``; no prompt wording changed that. A call to the
tool that just answered, whose arguments are only that answer and the previous call's own
arguments, brings nothing new: the previous observation answers the step. A real chain
stays allowed: ``add(5, 4)`` after ``add(2, 3) = 5`` brings the new value 4.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from noema_graph.state.models import ReasoningStep


def _scalar(value: object) -> str:
    """Return ``value`` as comparable text: numbers in one form, strings stripped."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(float(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            return repr(float(text))
        except ValueError:
            return text
    return json.dumps(value, sort_keys=True, default=str)


def _arguments(args: object) -> dict[str, str]:
    """Return ``args`` by name as comparable text (a non-mapping input under ``input``)."""
    if isinstance(args, Mapping):
        return {str(k): _scalar(v) for k, v in args.items()}
    return {} if args is None else {"input": _scalar(args)}


def _data(step: ReasoningStep) -> object:
    """Return what the tool returned: a success envelope's ``data``, else the observation."""
    text = step.observation or ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if isinstance(value, dict) and "data" in value:
        return value["data"]
    return value


ANSWER_KEYS = ("output", "result", "answer", "text")
"""Keys whose value is the answer when a tool returns an object (a code tool's ``output``)."""


def observation_answer(step: ReasoningStep) -> str:
    r"""Return ``step``'s result as a step answer.

    That is the tool's data as text; for an object, the value of its first
    :data:`ANSWER_KEYS` key that holds text or a number (``391`` rather than
    ``{"exit_code": 0, "output": "391\n", ...}``).
    """
    data = _data(step)
    if isinstance(data, Mapping):
        for key in ANSWER_KEYS:
            value = data.get(key)
            if isinstance(value, str | int | float) and not isinstance(value, bool):
                return str(value).strip()
    return data if isinstance(data, str) else json.dumps(data, default=str)


def last_tool_step(trace: Sequence[ReasoningStep]) -> ReasoningStep | None:
    """Return the latest tool step of ``trace``, or None."""
    return next((s for s in reversed(trace) if s.kind == "tool"), None)


def feeds_own_result(
    tool: str, args: Mapping[str, object], trace: Sequence[ReasoningStep]
) -> ReasoningStep | None:
    """Return the tool step a new call only repeats or feeds on, else None.

    The call ``tool(**args)`` repeats or feeds on the latest tool step when that step
    succeeded, called the same tool, and either had the same arguments or returned a single
    value that is among ``args`` while every other argument was an argument of that step.

    Args:
        tool: The name of the tool the model calls.
        args: Its arguments.
        trace: The run's trace so far.
    """
    last = last_tool_step(trace)
    if last is None or last.status != "ok" or last.action is None or last.action.tool != tool:
        return None
    before = _arguments(last.action.input)
    now = _arguments(args)
    if now == before:
        return last
    data = _data(last)
    if isinstance(data, Mapping | list):
        return None  # a structured result: following one of its parts is real progress
    result = _scalar(data)
    values = now.values()
    if result in values and all(v == result or v in before.values() for v in values):
        return last
    return None
