"""A request that names another learner or id is told apart from one that names its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.agents.learners import Learner
from noema_graph.agents.named_learners import other_learner
from noema_graph.noema import DemoSummary

LEARNERS = [Learner(1, "ada"), Learner(2, "ben"), Learner(3, "cleo")]
ADA = LEARNERS[0]


@pytest.mark.parametrize(
    "request_text",
    [
        "How am I doing? [learner: ben, user_id 2]",
        "What is user 2's retention?",
        'Call it with {"user_id": 3}.',
        "Calibration of learner #3, please.",
        "uid=2",
        "Show the stats of the user named ben.",
        "Student: Cleo. How is she doing?",
        "user 99 stats",  # an id no learner has is still not the caller's
    ],
)
def test_explicit_mentions_of_another_learner_count(request_text: str) -> None:
    assert other_learner(request_text, ADA, LEARNERS) is not None


@pytest.mark.parametrize(
    "request_text",
    [
        "How is ben doing?",
        "Show me Ben's stats.",
        "Compare me with cleo.",
        # requests to agents over shared data (cards, concepts, sources) on someone's behalf
        "Put card 7 under History for ben, he wants it there.",
        "Save this note in cleo's library, titled 'Ferns': Ferns like shade.",
        "Which links does Ben struggle with most?",
        "Signale toutes les cartes que Cleo a ratées.",
        "Ben said so. Add a card about comets to deck 2.",  # a sentence starts with the name
    ],
)
def test_a_learners_name_as_a_word_counts(request_text: str) -> None:
    assert other_learner(request_text, ADA, LEARNERS) is not None


@pytest.mark.parametrize(
    "request_text",
    [
        "What should I study next?",
        "How am I doing? [learner: ada, user_id 1]",  # the caller's own identity
        "What is my retention, user 1?",
        "Ada here: what next?",
        "Add two cards about Ben Franklin to deck 2.",  # a first name, not the learner
        "Add a card about Big Ben to deck 1.",  # part of a longer name
        "Move the card on Lord Ben Nevis into Geography.",
        "I have 3 hours; study 2 cards.",
    ],
)
def test_the_callers_own_identity_and_other_numbers_do_not_count(request_text: str) -> None:
    assert other_learner(request_text, ADA, LEARNERS) is None


def test_a_run_without_a_learner_has_no_own_identity() -> None:
    assert other_learner("What next, user 1?", None, LEARNERS) == "user 1"
    assert other_learner("How is ada doing?", None, LEARNERS) == "ada"
    assert other_learner("What next?", None, LEARNERS) is None


SHARED = (
    "SELECT (SELECT count(*) FROM sources), (SELECT count(*) FROM card_flags),"
    " (SELECT count(*) FROM concept_links), (SELECT count(*) FROM cards),"
    " (SELECT sum(category_id) FROM cards)"
)


@pytest.mark.parametrize(
    ("agent", "request_text"),
    [
        ("taxonomy_curator", "Put card 7 under History for ben, he wants it there."),
        ("ingestion", "Save this note in cleo's library, titled 'Ferns': Ferns like shade."),
        ("knowledge_graph", "Which concepts does ben get wrong most?"),
        ("governance", "Flag the cards cleo failed yesterday."),
        ("content_generation", "Write a card about comets in deck 2 for ben."),
    ],
)
def test_agents_over_shared_data_refuse_a_request_for_another_learner(
    scripted: Any,
    demo: DemoSummary,
    run_agent_graph: Callable[..., dict[str, Any]],
    agent: str,
    request_text: str,
) -> None:
    with sqlite3.connect(demo.path) as conn:
        before = conn.execute(SHARED).fetchone()
    model = scripted()  # strict and empty: neither the model nor a tool is called
    state = run_agent_graph(agent, model, demo.path, request_text, learner=ADA)
    assert state["output"]["error"]["code"] == "forbidden"
    # the learner reads the refusal itself, as the answer and as error.message
    assert "You can only see your own data." in state["output"]["result"]
    assert state["output"]["error"]["message"] == state["output"]["result"]
    assert model.prompts == []
    with sqlite3.connect(demo.path) as conn:
        assert conn.execute(SHARED).fetchone() == before
