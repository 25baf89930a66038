"""Final-output scorers: ``(output, expected) -> score in [0, 1]``.

* :func:`exact`: equal values (1 or 0);
* :func:`normalized_text`: equal after case folding, punctuation and whitespace removal;
* :func:`numeric`: numbers within an absolute or relative tolerance;
* :func:`json_subset`: every expected key, item and value is in the output (partial credit:
  the share of checks that pass), numbers within a tolerance, strings compared normalised,
  and operator objects for open answers: ``{"$gte": 0, "$lte": 20}``, ``{"$in": [...]}``,
  ``{"$len": 2}``, ``{"$icontains": "words"}``, ``{"$not_icontains": "words"}`` (whole
  words, normalised);
* any callable of the same shape;
* :func:`llm_judge`: an LLM judge through ``openevals``, when a model is configured.

Outputs given as JSON text are parsed before structured comparison.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from noema_graph.errors import ConfigurationError

FinalScorer = Callable[[object, object], float]
SCORER_NAMES = ("exact", "normalized", "numeric", "json_subset")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def parsed(value: object) -> object:
    """Return ``value`` parsed from JSON when it is JSON text, else unchanged."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def exact(output: object, expected: object) -> float:
    """Return 1.0 when ``output`` equals ``expected`` (JSON text parsed first), else 0.0."""
    return 1.0 if parsed(output) == parsed(expected) else 0.0


def normalize(text: object) -> str:
    """Return ``text`` case-folded, without punctuation, whitespace collapsed."""
    value = text if isinstance(text, str) else json.dumps(text, sort_keys=True)
    return " ".join(value.casefold().translate(_PUNCTUATION).split())


def normalized_text(output: object, expected: object) -> float:
    """Return 1.0 when both are the same text once normalised, else 0.0."""
    return 1.0 if normalize(output) == normalize(expected) else 0.0


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and (found := _NUMBER.search(value)):
        return float(found.group())
    return None


def _close(actual: float, expected: float, tolerance: float, relative: float) -> bool:
    return abs(actual - expected) <= max(tolerance, relative * abs(expected))


def numeric(tolerance: float = 0.0, *, relative: float = 0.0) -> FinalScorer:
    """Return a scorer comparing the first number of each side within a tolerance."""

    def score(output: object, expected: object) -> float:
        got, want = _number(parsed(output)), _number(parsed(expected))
        if got is None or want is None:
            return 0.0
        return 1.0 if _close(got, want, tolerance, relative) else 0.0

    return score


def _has_phrase(text: object, phrase: object) -> bool:
    """Return whether ``phrase`` occurs in ``text`` as whole words, normalised."""
    return f" {normalize(phrase)} " in f" {normalize(text)} "


def _operator(actual: object, op: str, arg: Any) -> bool:  # arg: a JSON value
    number = _number(actual) if not isinstance(actual, str) else None
    checks: dict[str, Callable[[], bool]] = {
        "$gte": lambda: number is not None and number >= arg,
        "$lte": lambda: number is not None and number <= arg,
        "$gt": lambda: number is not None and number > arg,
        "$lt": lambda: number is not None and number < arg,
        "$in": lambda: actual in arg,
        "$len": lambda: isinstance(actual, list | str | dict) and len(actual) == arg,
        "$icontains": lambda: _has_phrase(actual, arg),
        "$not_icontains": lambda: not _has_phrase(actual, arg),
    }
    if op not in checks:
        raise ConfigurationError(
            "expected_output", f"unknown operator {op!r}", fix=f"use one of {sorted(checks)}"
        )
    return checks[op]()


def _leaf(actual: object, expected: object, tolerance: float) -> float:
    if isinstance(expected, bool) or expected is None:
        return 1.0 if actual == expected else 0.0
    if isinstance(expected, int | float):
        got = _number(actual)
        return 1.0 if got is not None and _close(got, float(expected), tolerance, 0.0) else 0.0
    if isinstance(expected, str):
        return 1.0 if isinstance(actual, str) and normalize(actual) == normalize(expected) else 0.0
    return 1.0 if actual == expected else 0.0


def subset_score(actual: object, expected: object, tolerance: float = 0.0) -> float:
    """Return the share of ``expected``'s checks that ``actual`` passes (see the module)."""
    if isinstance(expected, dict) and expected and all(str(k).startswith("$") for k in expected):
        ops: dict[str, object] = {str(k): v for k, v in expected.items()}
        return sum(_operator(actual, k, v) for k, v in ops.items()) / len(ops)
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or not expected:
            return 1.0 if isinstance(actual, dict) else 0.0
        wanted: dict[Any, Any] = expected
        got: dict[Any, Any] = actual
        scores = [
            subset_score(got[k], v, tolerance) if k in got else 0.0 for k, v in wanted.items()
        ]
        return sum(scores) / len(scores)
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return 0.0
        return _list_score(list(actual), list(expected), tolerance)
    return _leaf(actual, expected, tolerance)


def _list_score(actual: list[object], expected: list[object], tolerance: float) -> float:
    if not expected:
        return 1.0
    free = list(range(len(actual)))
    total = 0.0
    for item in expected:
        best, best_i = 0.0, None
        for i in free:
            score = subset_score(actual[i], item, tolerance)
            if score > best:
                best, best_i = score, i
        if best_i is not None:
            free.remove(best_i)
        total += best
    return total / len(expected)


def json_subset(tolerance: float = 0.0) -> FinalScorer:
    """Return the JSON-subset scorer (numbers compared within ``tolerance``)."""

    def score(output: object, expected: object) -> float:
        return round(subset_score(parsed(output), parsed(expected), tolerance), 4)

    return score


def llm_judge(model: BaseChatModel, *, prompt: str | None = None) -> FinalScorer:
    """Return a scorer asking ``model`` to grade the output against the reference (openevals).

    The evaluator hands the scorer the item's input (its ``inputs`` argument).

    Args:
        model: The judge.
        prompt: A template with ``{inputs}``, ``{outputs}`` and ``{reference_outputs}``;
            default: openevals' correctness prompt.
    """
    try:
        from openevals.llm import create_llm_as_judge
        from openevals.prompts import CORRECTNESS_PROMPT
    except ImportError:
        raise ConfigurationError(
            "final_scorer",
            "llm_judge needs the openevals package",
            fix="pip install 'noema-graph[evals]'",
        ) from None

    judge: Any = create_llm_as_judge(
        prompt=prompt or CORRECTNESS_PROMPT, judge=model, feedback_key="correctness"
    )

    def score(output: object, expected: object, inputs: str = "") -> float:
        result: Any = judge(inputs=inputs, outputs=output, reference_outputs=expected)
        value = result["score"]
        return float(value) if not isinstance(value, bool) else (1.0 if value else 0.0)

    return score


def resolve_scorer(spec: str | FinalScorer, *, tolerance: float = 0.0) -> FinalScorer:
    """Return the scorer named ``spec`` (see :data:`SCORER_NAMES`), or ``spec`` if callable."""
    if callable(spec):
        return spec
    named: dict[str, FinalScorer] = {
        "exact": exact,
        "normalized": normalized_text,
        "numeric": numeric(tolerance),
        "json_subset": json_subset(tolerance),
    }
    if spec not in named:
        raise ConfigurationError(
            "final_scorer", f"no scorer {spec!r}", fix=f"use one of {SCORER_NAMES} or a callable"
        )
    return named[spec]
