"""Keep the prompt inside the model's context window by shortening old observations.

Only the prompt is compacted: the full observations stay in messages, trace and checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from noema_graph.models.context import (
    compact_messages,
    count_tokens,
    estimate_tokens,
    has_offline_counter,
)
from noema_graph.nodes.deps import AgentDeps
from noema_graph.state.models import ReasoningStep

ANSWER_RESERVE_TOKENS = 1024


@dataclass(frozen=True)
class CompactionRecord:
    """What a compaction did, for the trace and the ``compaction`` event."""

    before_tokens: int
    after_tokens: int
    truncated: int

    def as_step(self, iteration: int) -> ReasoningStep:
        """Return the trace entry recording this compaction."""
        return ReasoningStep(
            kind="compaction",
            thought=(
                f"Prompt compacted from {self.before_tokens} to {self.after_tokens} tokens "
                f"({self.truncated} observations shortened)."
            ),
            round=iteration,
        )


def answer_reserve(context_window: int) -> int:
    """Return the tokens kept free for the answer: 1024, or a quarter of a small window."""
    return min(ANSWER_RESERVE_TOKENS, context_window // 4)


def fit_context(
    prompt: Sequence[BaseMessage], deps: AgentDeps
) -> tuple[list[BaseMessage], CompactionRecord | None]:
    """Return ``prompt`` unchanged if it fits, else compacted plus a record of it."""
    window = deps.profile.context_window
    budget = window - answer_reserve(window)

    def own_count(messages: Sequence[BaseMessage]) -> int:
        return count_tokens(messages, deps.model)

    # the estimate is a sum over messages: compaction then recounts only what it changed
    count = own_count if has_offline_counter(deps.model) else estimate_tokens

    before = count(prompt)
    if before <= budget:
        return list(prompt), None
    result = compact_messages(list(prompt), budget_tokens=budget, count=count)
    record = CompactionRecord(
        before_tokens=result.before_tokens,
        after_tokens=result.after_tokens,
        truncated=result.truncated_count,
    )
    return list(result.messages), record
