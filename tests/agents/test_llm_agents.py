"""Learning, calibration and governance on the embedded model (marked ``llm``).

Each run must finish with a schema-valid result that reflects the store: the card learning
picks is due for the learner, calibration's figures are compute_calibration's (its advice
opens with them), governance
lists seeded bad cards and the store holds their flags. With -s the test prints its figures
(time, iterations, tokens); timings are measured here, never asserted.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import pytest

from noema_graph.agents import default_registry
from noema_graph.facade import run_agent
from noema_graph.models import make_model
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.state.output import AgentOutput

pytestmark = pytest.mark.llm

BEN = 2  # the demo learner these runs are for
NO_BUDGET_S = 3_600.0  # behaviour, not speed: a busy machine must not turn a run into a timeout
FIGURES = 1e-3  # views round figures to three places


@pytest.fixture(scope="module")
def local_model() -> Any:
    return make_model("local")


def _run(local_model: Any, demo: DemoSummary, agent: str, request: str) -> AgentOutput:
    started = time.perf_counter()
    out = run_agent(
        agent, request, user_id="ben", model=local_model, db=demo.path, timeout_s=NO_BUDGET_S
    )
    seconds = time.perf_counter() - started
    print(  # shown with -s: the figures the manual quotes
        f"{agent}: {seconds:.1f}s validated={out.validated} success={out.success} "
        f"iterations={out.metadata.iterations} tokens={out.metadata.token_usage.total_tokens} "
        f"tools={out.metadata.tools_used} result={out.result}"
    )
    assert out.success, out.error
    assert out.validated is True, out.result
    default_registry().get(agent).output_schema.model_validate(out.result)
    assert out.metadata.agent_name == agent and out.metadata.token_usage.total_tokens > 0
    assert out.reasoning.steps and 0.0 <= out.reasoning.confidence <= 1.0
    return out


def test_learning_picks_a_card_that_is_due(local_model: Any, demo: DemoSummary) -> None:
    out = _run(local_model, demo, "learning", "What should I study next?")
    with LearningStore.open(demo.path) as store:
        due = store.call("list_due_cards", user_id=BEN, limit=500, include_new=False)
    recall = {d.card.id: d.retrievability for d in due.cards}
    assert out.result["card_id"] in recall
    assert out.result["expected_recall"] == pytest.approx(
        recall[out.result["card_id"]], abs=FIGURES
    )
    assert out.metadata.tools_used == ["list_due_cards"]


def test_calibration_reports_the_learners_figures(local_model: Any, demo: DemoSummary) -> None:
    out = _run(local_model, demo, "calibration", "Is my confidence well calibrated?")
    with LearningStore.open(demo.path) as store:
        figures = store.call("compute_calibration", user_id=BEN)
    for name in ("brier", "ece", "bias"):
        assert out.result[name] == pytest.approx(getattr(figures, name), abs=FIGURES), name
    # the advice names the direction and the figures (answer_openings), as one sentence
    assert figures.mean_confidence is not None and figures.accuracy is not None
    opening = (
        f"You are {figures.direction}: about {figures.mean_confidence:.0%} confidence "
        f"against {figures.accuracy:.0%} recall"
    )
    advice = out.result["advice"]
    assert advice.startswith(opening) and advice.endswith(".") and advice.count(".") == 1


def test_governance_flags_the_seeded_bad_cards(local_model: Any, demo: DemoSummary) -> None:
    out = _run(local_model, demo, "governance", "Check the cards for quality problems.")
    bad = {card_id for ids in demo.bad_cards.values() for card_id in ids}
    listed = {item["card_id"] for item in out.result["flagged"]}
    assert listed and listed <= bad
    assert out.result["cards_scanned"] == demo.cards
    with sqlite3.connect(demo.path) as conn:
        flagged = {row[0] for row in conn.execute("SELECT card_id FROM card_flags")}
    assert bad <= flagged


def _category_of(demo: DemoSummary, card_id: int) -> str:
    with sqlite3.connect(demo.path) as conn:
        row = conn.execute(
            "SELECT c.name FROM cards k JOIN categories c ON c.id = k.category_id WHERE k.id = ?",
            (card_id,),
        ).fetchone()
    return str(row[0])


def test_taxonomy_curator_moves_the_named_card_into_the_named_category(
    local_model: Any, demo: DemoSummary
) -> None:
    # the default plan (list_categories, then move_card), the ids grounded in the request and
    # the category list, the moves read from the call: no id is the model's to invent
    request = "Move card 5 ('What is the capital of Spain?') into the Geography category."
    out = _run(local_model, demo, "taxonomy_curator", request)
    assert _category_of(demo, 5) == "Geography"
    assert out.metadata.tools_used == ["list_categories", "move_card"]
    with LearningStore.open(demo.path) as store:
        geography = next(
            c.id for c in store.call("list_categories").categories if c.name == "Geography"
        )
    assert out.result["moves"] == [{"card_id": 5, "category_id": geography}]


def test_knowledge_graph_links_the_two_named_concepts(local_model: Any, demo: DemoSummary) -> None:
    request = "Link the concept Halogens to Alkali metals (contrasts_with)."
    out = _run(local_model, demo, "knowledge_graph", request)
    link = {"source": "Halogens", "target": "Alkali metals", "kind": "contrasts_with"}
    assert out.result["links"] == [link]
    with LearningStore.open(demo.path) as store:
        links = store.call("get_concept_graph").links
    assert any((x.source, x.target, x.kind) == tuple(link.values()) for x in links)
