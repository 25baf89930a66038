"""Trajectory match modes, computed by LangChain's ``agentevals``, and tool precision/recall.

Both sides become OpenAI-format assistant messages with one tool call each, in execution
order, and ``agentevals``' trajectory match evaluator compares them, so the modes mean
exactly what they mean there:

* ``strict``: the same calls in the same order;
* ``unordered``: the same calls in any order;
* ``subset``: every actual call is among the expected ones (no extra calls);
* ``superset``: every expected call is among the actual ones (extra calls allowed).

Arguments are compared with ``args_match``: ``exact``, ``ignore``, ``subset`` (the actual
arguments are a subset of the expected ones) or ``superset`` (they include every expected
argument). Precision and recall pair actual and expected calls one to one by name and the
same argument rule: precision = paired / actual calls, recall = paired / expected calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from noema_graph.errors import ConfigurationError

TrajectoryMatch = Literal["strict", "unordered", "subset", "superset"]
ArgsMatch = Literal["exact", "ignore", "subset", "superset"]
TRAJECTORY_MATCHES: tuple[TrajectoryMatch, ...] = ("strict", "unordered", "subset", "superset")
ARGS_MATCHES: tuple[ArgsMatch, ...] = ("exact", "ignore", "subset", "superset")


class Call(Protocol):
    """A tool call: what a trajectory step's action and an expected call have in common."""

    @property
    def tool(self) -> str:
        """The tool's name."""
        ...

    @property
    def input(self) -> Any:
        """The call's arguments."""
        ...


def arguments(call: Call) -> dict[str, Any]:
    """Return the call's arguments as a dict (None: empty; a non-dict under ``input``)."""
    value = call.input
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): v for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType] -- keys of an untyped dict
    return {"input": value}


def as_messages(calls: Sequence[Call]) -> list[dict[str, Any]]:
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
    if trajectory_match not in TRAJECTORY_MATCHES:
        raise ConfigurationError(
            "trajectory_match", f"{trajectory_match!r} is not a mode", fix=f"{TRAJECTORY_MATCHES}"
        )
    if args_match not in ARGS_MATCHES:
        raise ConfigurationError(
            "args_match", f"{args_match!r} is not a mode", fix=f"{ARGS_MATCHES}"
        )


def trajectory_matches(
    actual: Sequence[Call],
    expected: Sequence[Call],
    *,
    trajectory_match: TrajectoryMatch = "strict",
    args_match: ArgsMatch = "exact",
    overrides: Mapping[str, Any] | None = None,
) -> bool:
    """Return whether ``actual`` matches ``expected`` in the given modes (by agentevals).

    Args:
        actual: The calls the agent made.
        expected: The reference calls.
        trajectory_match: How the sequences must correspond.
        args_match: How arguments must correspond.
        overrides: Per-tool argument rule: a mode name, a list of keys that must be equal,
            or a callable ``(actual_args, expected_args) -> bool`` (agentevals' overrides).
    """
    check_modes(trajectory_match, args_match)
    try:
        from agentevals.trajectory.match import create_trajectory_match_evaluator
    except ImportError:
        raise ConfigurationError(
            "trajectory_match",
            "needs the agentevals package",
            fix="pip install 'noema-graph[evals]'",
        ) from None
    evaluator = create_trajectory_match_evaluator(
        trajectory_match_mode=trajectory_match,
        tool_args_match_mode=args_match,
        tool_args_match_overrides=dict(overrides) if overrides else None,  # pyright: ignore[reportArgumentType] -- agentevals' own union
    )
    result: Any = evaluator(outputs=as_messages(actual), reference_outputs=as_messages(expected))
    return bool(result["score"])


def _equal(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return actual == expected


def _within(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(k in expected and expected[k] == v for k, v in actual.items())


def _covers(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(k in actual and actual[k] == v for k, v in expected.items())


_ARG_RULES: dict[str, Callable[[dict[str, Any], dict[str, Any]], bool]] = {
    "exact": _equal,
    "ignore": lambda _a, _e: True,
    "subset": _within,
    "superset": _covers,
}


def _args_rule(
    tool: str, args_match: ArgsMatch, overrides: Mapping[str, Any] | None
) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
    override = (overrides or {}).get(tool)
    if isinstance(override, str):
        return _ARG_RULES[override]
    if isinstance(override, list):
        keys: list[str] = [str(k) for k in override]  # pyright: ignore[reportUnknownVariableType] -- list of keys
        return lambda a, e: all(a.get(k) == e.get(k) for k in keys)
    if callable(override):
        return lambda a, e: bool(override(a, e))
    return _ARG_RULES[args_match]


def paired_calls(
    actual: Sequence[Call],
    expected: Sequence[Call],
    *,
    args_match: ArgsMatch = "exact",
    overrides: Mapping[str, Any] | None = None,
) -> int:
    """Return how many expected calls pair one to one with an actual call."""
    free = list(range(len(actual)))
    paired = 0
    for ref in expected:
        rule = _args_rule(ref.tool, args_match, overrides)
        for i in free:
            if actual[i].tool == ref.tool and rule(arguments(actual[i]), arguments(ref)):
                free.remove(i)
                paired += 1
                break
    return paired


def precision_recall(
    actual: Sequence[Call],
    expected: Sequence[Call],
    *,
    args_match: ArgsMatch = "exact",
    overrides: Mapping[str, Any] | None = None,
) -> tuple[float, float]:
    """Return (tool precision, tool recall) of ``actual`` against ``expected``.

    No actual call: precision 1.0 when nothing was expected, else 0.0. Nothing expected:
    recall 1.0.
    """
    paired = paired_calls(actual, expected, args_match=args_match, overrides=overrides)
    precision = paired / len(actual) if actual else (0.0 if expected else 1.0)
    recall = paired / len(expected) if expected else 1.0
    return round(precision, 4), round(recall, 4)
