"""References resolved against the store or refused, values the domain refuses (issue 33).

Scripted models (``SMALL``: a profile that does not plan, like the embedded model, so the
graph binds the calls from the request's reading), the demo store and the shipped e5 model.
Requests are phrased unlike the evaluation sets; the records are looked up by their text,
not by id, so a test fails when the resolution does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from noema_graph.agents.references import StoreNames, link
from noema_graph.noema import DemoSummary
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]
SMALL = {"metadata": {"noema_plans": False}}
WRITTEN = (
    "SELECT (SELECT group_concat(id || ':' || coalesce(category_id, ''), ',') FROM cards),"
    " (SELECT count(*) FROM concept_links), (SELECT count(*) FROM card_flags)"
)


def _one(path: str, sql: str, *args: Any) -> Any:
    with sqlite3.connect(path) as conn:
        row = conn.execute(sql, args).fetchone()
    return row[0] if row else None


def _card(path: str, back: str) -> int:
    return int(_one(path, "SELECT id FROM cards WHERE back = ? ORDER BY id", back))


def _category(path: str, name: str) -> int:
    return int(_one(path, "SELECT id FROM categories WHERE name = ?", name))


def _store(path: str) -> tuple[Any, ...]:
    with sqlite3.connect(path) as conn:
        return tuple(conn.execute(WRITTEN).fetchone())


def _calls(state: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    steps = state["output"]["reasoning"]["steps"]
    return [
        s["action"]["input"] for s in steps if s["kind"] == "tool" and s["action"]["tool"] == tool
    ]


def test_a_card_named_by_its_answer_is_moved_into_a_category_named_in_spanish(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    # the answer text names the card (FTS5 over the back), the category is Chemistry's
    # Spanish name (e5 similarity): both resolve, no model turn chooses them
    card = _card(demo.path, "Canberra")
    chemistry = _category(demo.path, "Chemistry")
    model = scripted(
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Moved."), **SMALL
    )
    request = "La tarjeta cuya respuesta es Canberra va en la categoría Química."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    assert state["output"]["success"], state["output"]["error"]
    assert _calls(state, "move_card") == [{"card_id": card, "category_id": chemistry}]
    refs = {r.kind: r for r in state["reading"].references}
    assert refs["category"].label == "Chemistry" and 0.9 <= refs["category"].score < 1.0
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", card) == chemistry


def test_a_quoted_answer_names_its_card_over_one_whose_answer_it_holds(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    # two cards answer "Nairobi"; the quote holds the whole answer of only one of them
    longer = _card(demo.path, "Nairobi, Kenya")
    model = scripted(
        tools_reply(call("flag_card", {"card_id": longer, "reason": "sloppy", "severity": "low"})),
        structured("GovernanceReport", flagged=[], cards_scanned=0, summary="Flagged."),
        **SMALL,
    )
    request = "The flashcard answered 'Nairobi, Kenya' looks careless to me: flag it."
    state = run_agent_graph("governance", model, demo.path, request)
    assert [r.value for r in state["reading"].references] == [longer]
    assert [c["card_id"] for c in _calls(state, "flag_card")] == [longer]


def test_a_tutor_reads_the_card_named_by_its_question_in_spanish_not_a_made_up_id(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    card = int(_one(demo.path, "SELECT id FROM cards WHERE front LIKE '%capital of Mongolia%'"))
    model = scripted(
        structured(
            "SocraticTurn",
            question="Which city is it?",
            concept="Capital cities",
            hint="It is in Asia.",
            understanding="partial",
        ),
        **SMALL,
    )
    request = "Dame una pista para la tarjeta que pregunta por la capital de Mongolia."
    state = run_agent_graph("socratic_tutor", model, demo.path, request)
    assert state["output"]["success"], state["output"]["error"]
    assert _calls(state, "get_card") == [{"card_id": card}]


def test_a_name_no_record_means_clearly_is_refused_naming_the_nearest(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    # Zoology is close to Biology in meaning, but not clearly the same: never a guess
    before = _store(demo.path)
    model = scripted(**SMALL)
    state = run_agent_graph(
        "taxonomy_curator", model, demo.path, "File card 12 in the Zoology category."
    )
    error = state["output"]["error"]
    assert error["code"] == "not_found"
    assert error["message"].startswith("There is no category named 'Zoology'; categories: ")
    assert "; nearest: Biology" in error["message"]
    assert error["details"]["candidates"][0] == "Biology"
    assert _calls(state, "move_card") == []
    assert _store(demo.path) == before


def test_two_pairs_of_concepts_give_two_links_from_a_model_that_makes_one_call(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    one = {"source": "Halogens", "target": "Noble gases", "kind": "contrasts_with"}
    model = scripted(
        plan_reply("Link the concepts"),
        tools_reply(call("get_concept_graph", {})),
        tools_reply(call("link_concepts", one)),  # the first pair only
        text("linked both"),
        structured("ConceptLinks", links=[], summary="Linked."),
    )
    request = (
        "Mark Halogens against Noble gases and Metalloids against Nonmetals as contrasts_with."
    )
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    links = [(c["source"], c["target"], c["kind"]) for c in _calls(state, "link_concepts")]
    assert links == [
        ("Halogens", "Noble gases", "contrasts_with"),
        ("Metalloids", "Nonmetals", "contrasts_with"),
    ]
    assert _one(demo.path, "SELECT count(*) FROM concept_links WHERE kind = 'contrasts_with'") >= 2


def test_two_pairs_of_concepts_give_two_links_on_the_small_model_path(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(structured("ConceptLinks", links=[], summary="Linked."), **SMALL)
    request = "Relie Halogens à Noble gases et Metalloids à Nonmetals, type related_to."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    links = [(c["source"], c["target"]) for c in _calls(state, "link_concepts")]
    assert links == [("Halogens", "Noble gases"), ("Metalloids", "Nonmetals")]


def test_a_link_kind_written_in_french_that_the_domain_lacks_is_refused(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _store(demo.path)
    model = scripted(**SMALL)
    request = "Crée un lien du type 'engendre' de Halogens vers Nonmetals."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    error = state["output"]["error"]
    assert error["code"] == "invalid_input"
    assert error["message"].startswith("'engendre' is not an allowed value; allowed: ")
    assert _calls(state, "link_concepts") == []
    assert _store(demo.path) == before


def test_counted_names_are_not_the_category_a_card_moves_into(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    biology = _category(demo.path, "Biology")
    model = scripted(
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Moved."), **SMALL
    )
    request = "I count 12 Chemistry cards and 30 Geography cards; put card 9 under Biology."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    assert state["output"]["success"], state["output"]["error"]
    assert _calls(state, "move_card") == [{"card_id": 9, "category_id": biology}]


def test_card_text_in_another_language_and_the_more_precise_card_win(demo: DemoSummary) -> None:
    store = StoreNames(demo.path)
    symbol = int(_one(demo.path, "SELECT id FROM cards WHERE front LIKE '%symbol for Cobalt%'"))
    answer = _card(demo.path, "Cobalt")  # another card whose whole answer is the word
    french = link(
        "Aide-moi avec la carte du symbole chimique du cobalt.", ["card"], store, card_text=True
    )
    assert [r.value for r in french.references] == [symbol]
    by_answer = link(
        "Help me with the card whose answer is Cobalt.", ["card"], store, card_text=True
    )
    assert [r.value for r in by_answer.references] == [answer]
    # nothing close enough: no card is linked, none is guessed
    assert (
        link("Quiz me on the card about tides.", ["card"], store, card_text=True).references == []
    )


def test_concepts_named_in_another_language_without_their_noun_are_linked_in_order(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(structured("ConceptLinks", links=[], summary="Linked."), **SMALL)
    request = "Relie Gaz nobles à Halogens, type contrasts_with."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    assert _calls(state, "link_concepts") == [
        {"source": "Noble gases", "target": "Halogens", "kind": "contrasts_with"}
    ]


def test_a_foreign_name_two_records_mean_alike_is_refused(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    # "Métaux alcalins": Alkali metals and Alkaline earth metals score too close to tell
    before = _store(demo.path)
    model = scripted(**SMALL)
    request = "Relie Métaux alcalins à Halogens, type related_to."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    assert state["output"]["error"]["code"] == "not_found"
    assert _calls(state, "link_concepts") == []
    assert _store(demo.path) == before
