"""The run-time claim check of ``AgentConfig(check_claims=True)``.

``finalize`` calls :func:`apply_claims_check` on the output it built: every effect the
answer (or a thought) claims that no successful tool call backs becomes a
``hallucinated_action`` entry of the output's reasoning, and lowers its confidence by
:data:`CLAIM_PENALTY` each (at most :data:`MAX_CLAIM_PENALTY`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from noema_graph.claims import Finding, hallucinated_actions
from noema_graph.state.models import ReasoningStep
from noema_graph.state.output import AgentOutput, TraceStep
from noema_graph.trajectory.steps import trajectory_of

CLAIM_PENALTY = 0.2
MAX_CLAIM_PENALTY = 0.6


def _step(finding: Finding, round_: int) -> ReasoningStep:
    where = "the answer" if finding.source == "final_output" else f"step {finding.step}"
    return ReasoningStep(
        kind="hallucinated_action",
        thought=f"Unbacked claim in {where} ({finding.action}): {finding.text}",
        observation=finding.reason,
        status="error",
        round=round_,
    )


def claims_check(
    output: Mapping[str, object], trace: Sequence[ReasoningStep]
) -> tuple[list[ReasoningStep], float]:
    """Return the ``hallucinated_action`` entries of a finished run and its confidence penalty.

    Args:
        output: The output contract (``AgentOutput`` as a dict); its ``result`` is read.
        trace: The run's trace (the thoughts are read, the tool calls back the claims).

    Returns:
        One step per unbacked claim (kind ``hallucinated_action``, status ``error``, the
        reason as observation), and the amount to subtract from the confidence.
    """
    findings = hallucinated_actions(trajectory_of("", output.get("result"), trace))
    # a step's answer is also the final answer: the same claim is reported once
    unique = {(f.action, f.text.strip()): f for f in reversed(findings)}
    round_ = max((s.round for s in trace), default=0)
    steps = [_step(f, round_) for f in reversed(unique.values())]
    return steps, min(CLAIM_PENALTY * len(steps), MAX_CLAIM_PENALTY)


def apply_claims_check(
    output: AgentOutput, trace: Sequence[ReasoningStep]
) -> tuple[AgentOutput, list[ReasoningStep]]:
    """Return ``output`` with the unbacked claims added to its reasoning, and those steps.

    The steps are numbered after the trace; append them to the state's trace as well.
    """
    steps, penalty = claims_check(output.model_dump(mode="json"), trace)
    if not steps:
        return output, []
    first = len(trace) + 1
    numbered = [s.model_copy(update={"step": first + i}) for i, s in enumerate(steps)]
    reasoning = output.reasoning.model_copy(
        update={
            "steps": [
                *output.reasoning.steps,
                *(
                    TraceStep(
                        step=s.step,
                        kind=s.kind,
                        thought=s.thought,
                        observation=s.observation,
                        timestamp=s.timestamp,
                    )
                    for s in numbered
                ),
            ],
            "confidence": round(max(output.reasoning.confidence - penalty, 0.0), 3),
        }
    )
    return output.model_copy(update={"reasoning": reasoning}), numbered
