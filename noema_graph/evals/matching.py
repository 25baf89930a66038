"""Trajectory match modes, exactly agentevals', on message lists; tool precision/recall.

A trajectory is compared as a list of messages. Two message-level sides (two
:class:`~noema_graph.trajectory.schema.Trajectory` objects, or OpenAI / LangChain message
lists) are compared message for message, as LangChain's ``agentevals`` trajectory match
evaluator compares them, with the same result in every mode (tested against it). When a side
is a list of calls (one call per message) or a list of lists of calls (one list per
message), both sides are read as their assistant messages that call tools.

* ``strict``: the same messages in the same order (roles; within a message, the same calls
  in any order);
* ``unordered``: the same calls in any order;
* ``subset``: every actual call is among the expected ones (no extra calls);
* ``superset``: every expected call is among the actual ones (extra calls allowed).

As in agentevals, calls pair greedily (first fit) and ``args_match`` compares arguments in
a direction set by the mode: ``matcher(actual, expected)`` in ``strict`` and ``superset``,
``matcher(expected, actual)`` in ``subset``, both in ``unordered``; ``subset`` means "the
first's arguments are among the second's" and ``superset`` the reverse. Tool precision and
recall pair the calls with the same rule, so an item that matches never scores 0 on them.

``unordered_optimal``, ``subset_optimal`` and ``superset_optimal`` are this package's own:
the same sets as their namesakes, but the pairing is a maximum bipartite matching (a pairing
exists, not the first fit finds it) and arguments are always compared
``matcher(actual, expected)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol

from langchain_core.messages import BaseMessage

from noema_graph.errors import ConfigurationError
from noema_graph.trajectory.schema import Trajectory, openai_messages, to_openai

TrajectoryMatch = Literal[
    "strict",
    "unordered",
    "subset",
    "superset",
    "unordered_optimal",
    "subset_optimal",
    "superset_optimal",
]
ArgsMatch = Literal["exact", "ignore", "subset", "superset"]
AGENTEVALS_MATCHES: tuple[TrajectoryMatch, ...] = ("strict", "unordered", "subset", "superset")
TRAJECTORY_MATCHES = AGENTEVALS_MATCHES
"""agentevals' modes (kept under this name for callers of the first version)."""
OPTIMAL_MATCHES: tuple[TrajectoryMatch, ...] = (
    "unordered_optimal",
    "subset_optimal",
    "superset_optimal",
)
ALL_MATCHES = AGENTEVALS_MATCHES + OPTIMAL_MATCHES
ARGS_MATCHES: tuple[ArgsMatch, ...] = ("exact", "ignore", "subset", "superset")

Rule = Callable[[object, object], bool]


class Call(Protocol):
    """A tool call: what a trajectory step's action and an expected call have in common."""

    @property
    def tool(self) -> str:
        """The tool's name."""
        ...

    @property
    def input(self) -> object:
        """The call's arguments."""
        ...


class ToolCall(NamedTuple):
    """A call as the matcher sees it: the tool's name and its arguments."""

    name: str
    args: object


PairRule = Callable[[ToolCall, ToolCall], bool]


class Message(NamedTuple):
    """A message as the matcher sees it: its role and its calls (None: no ``tool_calls``)."""

    role: str
    calls: tuple[ToolCall, ...] | None


def arguments(call: Call) -> dict[str, object]:
    """Return the call's arguments as a dict (None: empty; a non-dict under ``input``)."""
    return _args(call.input)


def _args(value: object) -> dict[str, object]:
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}
    return {"input": value}


def as_messages(calls: Sequence[Call]) -> list[dict[str, object]]:
    """Return ``calls`` as OpenAI assistant messages, one tool call per message."""
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": call.tool, "arguments": json.dumps(arguments(call))},
                }
            ],
        }
        for i, call in enumerate(calls)
    ]


def check_modes(trajectory_match: str, args_match: str) -> None:
    """Raise :class:`ConfigurationError` unless both modes are known."""
    if trajectory_match not in ALL_MATCHES:
        raise ConfigurationError(
            "trajectory_match", f"{trajectory_match!r} is not a mode", fix=f"{ALL_MATCHES}"
        )
    if args_match not in ARGS_MATCHES:
        raise ConfigurationError(
            "args_match", f"{args_match!r} is not a mode", fix=f"{ARGS_MATCHES}"
        )


# -- reading either side --------------------------------------------------------------------


def _tool_call(raw: Mapping[str, Any]) -> ToolCall:
    if "function" in raw:
        function: Mapping[str, Any] = raw["function"]
        return ToolCall(str(function["name"]), json.loads(function["arguments"]))
    return ToolCall(str(raw["name"]), raw.get("args"))


def _from_openai(messages: list[dict[str, Any]]) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        raw = message.get("tool_calls")
        calls = None if raw is None else tuple(_tool_call(c) for c in raw)
        out.append(Message(str(message["role"]), calls))
    return out


def _call(value: object) -> ToolCall:
    if isinstance(value, Mapping) and "tool" in value:
        fields: Mapping[str, object] = value
        return ToolCall(str(fields["tool"]), _args(fields.get("input")))
    if isinstance(tool := getattr(value, "tool", None), str):
        return ToolCall(tool, _args(getattr(value, "input", None)))
    raise ConfigurationError(
        "expected_trajectory",
        f"{value!r} is not a tool call",
        fix='write {"tool": name, "input": {...}} (or a list of them per message)',
    )


def _is_message(value: object) -> bool:
    return isinstance(value, BaseMessage) or (isinstance(value, Mapping) and "role" in value)


def read_side(side: Any) -> tuple[list[Message], bool]:
    """Return ``side`` as messages, and whether it is a whole message list.

    A :class:`Trajectory`, an OpenAI / LangChain message list or ``{"messages": [...]}`` is
    a whole message list; a list of calls is one assistant message per call, and a list of
    lists of calls one assistant message per list.
    """
    if isinstance(side, Trajectory):
        return _from_openai(to_openai(side)), True
    if isinstance(side, Mapping) and "messages" in side:
        return _from_openai(openai_messages(side)), True
    items: list[Any] = list(side)
    if items and all(_is_message(i) for i in items):
        return _from_openai(openai_messages(items)), True
    messages: list[Message] = []
    for item in items:
        group = item if isinstance(item, Sequence) and not isinstance(item, str) else [item]
        messages.append(Message("assistant", tuple(_call(c) for c in group)))
    return messages, False


def _calls_only(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "assistant" and m.calls]


def flat_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """Return every call of ``messages``, in order."""
    return [c for m in messages for c in (m.calls or ())]


# -- argument rules (agentevals' matchers) ---------------------------------------------------


def _exact(first: object, second: object) -> bool:
    return first == second


def _within(first: Any, second: Any) -> bool:
    """Every key-value pair of ``first`` is in ``second``."""
    return all(k in second and second[k] == v for k, v in first.items())


def _covers(first: Any, second: Any) -> bool:
    """Every key-value pair of ``second`` is in ``first``."""
    return all(k in first and first[k] == v for k, v in second.items())


_ARG_RULES: dict[str, Rule] = {
    "exact": _exact,
    "ignore": lambda _a, _b: True,
    "subset": _within,
    "superset": _covers,
}


def _nested(value: object, path: str) -> object:
    current = value
    for part in path.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
        if current is None:
            return None
    return current


def rule_for(tool: str, args_match: ArgsMatch, overrides: Mapping[str, object] | None) -> Rule:
    """Return the argument rule of ``tool``: its override (mode, keys, callable) or the mode."""
    override = overrides.get(tool, False) if overrides is not None else False
    if not override:
        return _ARG_RULES.get(args_match, _ARG_RULES["ignore"])
    if isinstance(override, str):
        return _ARG_RULES.get(override, _ARG_RULES["ignore"])
    if callable(override):
        return lambda a, b: bool(override(a, b))
    if isinstance(override, list):
        keys = [str(k) for k in override]
        return lambda a, b: all(_nested(a, k) == _nested(b, k) for k in keys)
    raise ConfigurationError(
        "overrides", f"{override!r} for {tool!r} is not a rule", fix="a mode, keys or a callable"
    )


# -- the modes --------------------------------------------------------------------------------


def _covered(
    outputs: Sequence[ToolCall],
    references: Sequence[ToolCall],
    args_match: ArgsMatch,
    overrides: Mapping[str, object] | None,
) -> bool:
    """Return whether every reference call finds an output call (``_is_trajectory_superset``)."""
    used: set[int] = set()
    for ref in references:
        rule = rule_for(ref.name, args_match, overrides)
        for index, out in enumerate(outputs):
            if out.name == ref.name and index not in used and rule(out.args, ref.args):
                used.add(index)
                break
        else:
            return False
    return True


def _strict(
    outputs: Sequence[Message],
    references: Sequence[Message],
    args_match: ArgsMatch,
    overrides: Mapping[str, object] | None,
) -> bool:
    if len(outputs) != len(references):
        return False
    for out, ref in zip(outputs, references, strict=True):
        if out.role != ref.role or (out.calls is None) != (ref.calls is None):
            return False
        if out.calls is None or ref.calls is None:
            continue
        if len(out.calls) != len(ref.calls):
            return False
        seen = [False] * len(ref.calls)
        for call in out.calls:
            rule = rule_for(call.name, args_match, overrides)
            for i, candidate in enumerate(ref.calls):
                if not seen[i] and candidate.name == call.name and rule(call.args, candidate.args):
                    seen[i] = True
                    break
            else:
                return False
    return True


def max_pairs(actual: Sequence[ToolCall], expected: Sequence[ToolCall], rule: PairRule) -> int:
    """Return the size of a maximum one-to-one pairing of calls that ``rule`` accepts."""
    edges = [[j for j, e in enumerate(expected) if rule(a, e)] for a in actual]
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    return sum(augment(i, set()) for i in range(len(actual)))


def pair_rule(
    trajectory_match: TrajectoryMatch, args_match: ArgsMatch, overrides: Mapping[str, object] | None
) -> PairRule:
    """Return whether an (actual, expected) call pair matches, in the mode's direction."""

    def forward(a: ToolCall, e: ToolCall) -> bool:
        return a.name == e.name and rule_for(e.name, args_match, overrides)(a.args, e.args)

    def backward(a: ToolCall, e: ToolCall) -> bool:
        return a.name == e.name and rule_for(a.name, args_match, overrides)(e.args, a.args)

    if trajectory_match == "subset":
        return backward
    if trajectory_match == "unordered":
        return lambda a, e: forward(a, e) and backward(a, e)
    return forward


def _greedy_pairs(actual: Sequence[ToolCall], expected: Sequence[ToolCall], rule: PairRule) -> int:
    used: set[int] = set()
    for ref in expected:
        for index, call in enumerate(actual):
            if index not in used and rule(call, ref):
                used.add(index)
                break
    return len(used)


def _optimal(
    mode: TrajectoryMatch,
    actual: list[ToolCall],
    expected: list[ToolCall],
    rule: PairRule,
) -> bool:
    paired = max_pairs(actual, expected, rule)
    if mode == "subset_optimal":
        return paired == len(actual)
    if mode == "superset_optimal":
        return paired == len(expected)
    return paired == len(actual) == len(expected)


def match_messages(
    actual: list[Message],
    expected: list[Message],
    *,
    trajectory_match: TrajectoryMatch = "strict",
    args_match: ArgsMatch = "exact",
    overrides: Mapping[str, object] | None = None,
) -> bool:
    """Return whether the message lists match (agentevals' result in its four modes)."""
    if trajectory_match == "strict":
        return _strict(actual, expected, args_match, overrides)
    out, ref = flat_calls(actual), flat_calls(expected)
    if trajectory_match == "superset":
        return _covered(out, ref, args_match, overrides)
    if trajectory_match == "subset":
        return _covered(ref, out, args_match, overrides)
    if trajectory_match == "unordered":
        return _covered(out, ref, args_match, overrides) and _covered(
            ref, out, args_match, overrides
        )
    return _optimal(trajectory_match, out, ref, pair_rule(trajectory_match, args_match, overrides))


def _sides(actual: object, expected: object) -> tuple[list[Message], list[Message]]:
    out, whole_out = read_side(actual)
    ref, whole_ref = read_side(expected)
    if whole_out and whole_ref:
        return out, ref
    return _calls_only(out), _calls_only(ref)


def trajectory_matches(
    actual: object,
    expected: object,
    *,
    trajectory_match: TrajectoryMatch = "strict",
    args_match: ArgsMatch = "exact",
    overrides: Mapping[str, object] | None = None,
) -> bool:
    """Return whether ``actual`` matches ``expected`` in the given modes.

    Args:
        actual: The run: a :class:`Trajectory`, a message list, or its calls (a list of
            calls, or a list of lists of calls, one per message).
        expected: The reference, in any of the same forms.
        trajectory_match: How the sequences must correspond (module docstring).
        args_match: How arguments must correspond.
        overrides: Per-tool argument rule: a mode name, a list of keys that must be equal
            (dotted paths reach nested keys), or a callable ``(first_args, second_args) ->
            bool`` (agentevals' ``tool_args_match_overrides``).
    """
    check_modes(trajectory_match, args_match)
    out, ref = _sides(actual, expected)
    return match_messages(
        out, ref, trajectory_match=trajectory_match, args_match=args_match, overrides=overrides
    )


def precision_recall(
    actual: object,
    expected: object,
    *,
    trajectory_match: TrajectoryMatch = "superset",
    args_match: ArgsMatch = "exact",
    overrides: Mapping[str, object] | None = None,
) -> tuple[float, float]:
    """Return (tool precision, tool recall) of ``actual`` against ``expected``.

    Calls pair one to one by name and the argument rule in ``trajectory_match``'s direction
    (greedy in agentevals' modes, a maximum matching in the ``*_optimal`` ones); precision =
    paired / actual calls, recall = paired / expected calls. No actual call: precision 1.0
    when nothing was expected, else 0.0. Nothing expected: recall 1.0.
    """
    check_modes(trajectory_match, args_match)
    out_messages, ref_messages = _sides(actual, expected)
    out, ref = flat_calls(out_messages), flat_calls(ref_messages)
    rule = pair_rule(trajectory_match, args_match, overrides)
    if trajectory_match in OPTIMAL_MATCHES:
        paired = max_pairs(out, ref, rule)
    else:
        paired = _greedy_pairs(out, ref, rule)
    precision = paired / len(out) if out else (0.0 if ref else 1.0)
    recall = paired / len(ref) if ref else 1.0
    return round(precision, 4), round(recall, 4)
