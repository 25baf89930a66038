"""Coherence of reasoning: thoughts consistent with the actions after them and the answer.

Rule-based (:func:`coherence`): a thought that names a tool (the words of its name, as in
"search the cards" for ``search_cards``) or the values of its arguments is consistent with
the next call when that call is of the tool it names, and inconsistent when it names only
another tool of the run; a thought naming neither says nothing and is not counted. The final
answer counts once: consistent when no effect it claims is unbacked by a call
(:func:`~noema_graph.claims.hallucinated_actions`). The score is the share of
consistent checks; None when there is nothing to check. :func:`coherence_judge` asks an LLM
judge instead (openevals), when a model is configured.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel

from noema_graph.claims import hallucinated_actions
from noema_graph.errors import ConfigurationError
from noema_graph.trajectory.schema import StepAction, Trajectory

_WORD = re.compile(r"[a-z0-9]+")
_COMMON = frozenset(
    ("get", "set", "the", "a", "an", "of", "to", "in", "for", "on", "by", "with", "and", "or")
)

CoherenceScorer = Callable[[Trajectory], float | None]

COHERENCE_PROMPT = """You are grading the reasoning of an AI agent.
Score 1.0 when every thought is consistent with the action that follows it and with the
final answer, 0.0 when they contradict each other; partial credit for partial consistency.

<input>{inputs}</input>
<trajectory>{outputs}</trajectory>
"""


def _words(text: str) -> set[str]:
    found = set(_WORD.findall(text.lower()))
    return found | {w[:-1] for w in found if w.endswith("s") and len(w) > 3}


def _tool_words(tool: str) -> set[str]:
    return {w for w in _WORD.findall(tool.lower().replace("_", " ")) if w not in _COMMON}


def _values(action: StepAction) -> set[str]:
    args: Any = action.input if isinstance(action.input, dict) else {}
    values = [str(v).lower() for v in args.values() if isinstance(v, str | int)]
    return {v for v in values if len(v) >= 2}


def _verdict(thought: str, action: StepAction, others: set[str]) -> bool | None:
    said = _words(thought)
    own = _tool_words(action.tool)
    if said & own or any(v in thought.lower() for v in _values(action)):
        return True
    if said & (others - own):
        return False
    return None


def coherence(trajectory: Trajectory) -> float | None:
    """Return the rule-based coherence score of ``trajectory`` (module docstring)."""
    tools = {s.action.tool for s in trajectory.steps if s.action is not None}
    others = set().union(*(_tool_words(t) for t in tools)) if tools else set[str]()
    checks: list[bool] = []
    pending = ""
    for step in trajectory.steps:
        thought = f"{pending} {step.thought}".strip()
        if step.action is None:
            pending = thought
            continue
        pending = ""
        if thought and (verdict := _verdict(thought, step.action, others)) is not None:
            checks.append(verdict)
    if trajectory.final_output is not None:
        answer = [f for f in hallucinated_actions(trajectory) if f.source == "final_output"]
        checks.append(not answer)
    return round(sum(checks) / len(checks), 4) if checks else None


def coherence_judge(model: BaseChatModel, *, prompt: str | None = None) -> CoherenceScorer:
    """Return a scorer asking ``model`` to grade the coherence of a trajectory (openevals)."""
    try:
        from openevals.llm import create_llm_as_judge
    except ImportError:
        raise ConfigurationError(
            "coherence", "coherence_judge needs the openevals package",
            fix="pip install 'noema-graph[evals]'",
        ) from None  # fmt: skip
    judge: Any = create_llm_as_judge(
        prompt=prompt or COHERENCE_PROMPT, judge=model, feedback_key="coherence", continuous=True
    )

    def score(trajectory: Trajectory) -> float | None:
        steps = trajectory.model_dump(mode="json", include={"steps", "final_output"})
        value = judge(inputs=trajectory.input, outputs=steps)["score"]
        return float(value)

    return score
