"""A request that names another learner or id is told apart from one that names its own."""

from __future__ import annotations

import pytest

from noema_graph.agents.learners import Learner
from noema_graph.agents.named_learners import other_learner

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
def test_explicit_mentions_of_another_learner_count_for_every_agent(request_text: str) -> None:
    for bare in (True, False):
        assert other_learner(request_text, ADA, LEARNERS, bare_names=bare) is not None


@pytest.mark.parametrize(
    "request_text", ["How is ben doing?", "Show me Ben's stats.", "Compare me with cleo."]
)
def test_a_bare_name_counts_for_agents_that_read_a_learners_rows(request_text: str) -> None:
    assert other_learner(request_text, ADA, LEARNERS, bare_names=True) is not None
    assert other_learner(request_text, ADA, LEARNERS, bare_names=False) is None


@pytest.mark.parametrize(
    "request_text",
    [
        "What should I study next?",
        "How am I doing? [learner: ada, user_id 1]",  # the caller's own identity
        "What is my retention, user 1?",
        "Ada here: what next?",
        "Add two cards about Ben Franklin to deck 2.",  # a first name, not the learner
        "I have 3 hours; study 2 cards.",
    ],
)
def test_the_callers_own_identity_and_other_numbers_do_not_count(request_text: str) -> None:
    assert other_learner(request_text, ADA, LEARNERS, bare_names=True) is None


def test_a_run_without_a_learner_has_no_own_identity() -> None:
    assert other_learner("What next, user 1?", None, LEARNERS, bare_names=True) == "user 1"
    assert other_learner("How is ada doing?", None, LEARNERS, bare_names=True) == "ada"
    assert other_learner("What next?", None, LEARNERS, bare_names=True) is None
