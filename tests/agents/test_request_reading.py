"""The request is read before any write: intent, references, refused values (issue 33).

Scripted models, the demo store and the shipped e5 model for the intent decision; the
requests here are phrased unlike the labelled examples in ``intents.toml``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.noema import DemoSummary
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]
SMALL = {"metadata": {"noema_plans": False}}
"""A scripted model whose profile says it does not plan (like the embedded one)."""
WRITTEN = (
    "SELECT (SELECT group_concat(id || ':' || coalesce(category_id, ''), ',') FROM cards),"
    " (SELECT count(*) FROM concept_links), (SELECT count(*) FROM card_flags),"
    " (SELECT count(*) FROM sources), (SELECT count(*) FROM cards)"
)
"""What the agents here could change: every card's category, links, flags, sources, cards."""


def _store(path: str) -> tuple[Any, ...]:
    with sqlite3.connect(path) as conn:
        return tuple(conn.execute(WRITTEN).fetchone())


def _tools(state: dict[str, Any]) -> list[tuple[str, dict[str, Any], str]]:
    steps = state["output"]["reasoning"]["steps"]
    return [
        (s["action"]["tool"], s["action"]["input"], s["observation"] or "")
        for s in steps
        if s["kind"] == "tool"
    ]


def _category(path: str, card: int) -> int | None:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT category_id FROM cards WHERE id = ?", (card,)).fetchone()[0]


def _category_id(path: str, name: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT id FROM categories WHERE name = ?", (name,)).fetchone()[0])


def test_a_question_to_an_agent_that_writes_never_reaches_the_write_tool(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _store(demo.path)
    geography = _category_id(demo.path, "Geography")
    model = scripted(
        plan_reply("Look at the categories"),
        tools_reply(call("list_categories", {})),
        # the model tries the write anyway: it is not offered, and refused if sent
        tools_reply(call("move_card", {"card_id": 12, "category_id": geography})),
        text("Card 12 would fit Geography."),
        structured("TaxonomyReport", moves=[], suggestions=[], summary="It would fit."),
    )
    request = "Would card 12 sit better in Geography? I only want your view."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    assert state["reading"].intent == "question"
    tools = _tools(state)
    assert [t for t, *_ in tools] == ["list_categories", "move_card"]
    assert tools[1][2].startswith("Not executed: move_card changes data and the request asks")
    assert all("move_card" not in names for names in model.bound_tool_names)
    assert _store(demo.path) == before


def test_a_missing_category_is_refused_with_the_candidates_and_nothing_runs(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _store(demo.path)
    model = scripted(plan_reply("Move the card"))
    request = "Please put card 20 into the Zoology category."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    out = state["output"]
    assert not out["success"] and out["error"]["code"] == "not_found"
    message = out["error"]["message"]
    assert message.startswith("There is no category named 'Zoology'; categories: ")
    assert "Geography" in message and "Chemistry" in message
    assert "Geography" in out["error"]["details"]["candidates"]
    assert out["result"] == message
    assert _tools(state) == []
    assert _store(demo.path) == before


def test_an_unknown_card_id_reads_as_the_domain_problem(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(plan_reply("Read the card"))
    state = run_agent_graph("socratic_tutor", model, demo.path, "Quiz me on card 9999 please.")
    out = state["output"]
    assert out["error"]["code"] == "not_found"
    assert out["error"]["message"] == "There is no card 9999."
    assert "loop" not in out["error"]["message"]


def test_two_cards_named_give_two_calls_from_a_model_that_makes_one(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    capitals = _category_id(demo.path, "Capitals")
    model = scripted(
        plan_reply("Move the cards"),
        tools_reply(call("list_categories", {})),
        # one call, for the first card: the graph makes the same call for the second
        tools_reply(call("move_card", {"card_id": 31, "category_id": capitals})),
        text("moved both"),
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Both moved."),
    )
    request = "Cards 31 and 47 go under Capitals; recategorise them."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    assert state["output"]["success"], state["output"]["error"]
    moves = [(t, a) for t, a, _ in _tools(state) if t == "move_card"]
    assert [a["card_id"] for _, a in moves] == [31, 47]
    assert _category(demo.path, 31) == _category(demo.path, 47) == capitals


def test_two_cards_named_give_two_calls_on_the_small_model_path(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    # no plan and no step turn: the references are bound from the reading, both calls at once
    capitals = _category_id(demo.path, "Capitals")
    model = scripted(
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Both moved."), **SMALL
    )
    request = "Las tarjetas 31 y 47 van en la categoría Capitales, muévelas."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    assert state["output"]["success"], state["output"]["error"]
    moves = [a for t, a, _ in _tools(state) if t == "move_card"]
    assert moves == [
        {"card_id": 31, "category_id": capitals},
        {"card_id": 47, "category_id": capitals},
    ]
    assert state["output"]["result"]["moves"] == moves
    assert len(model.prompts) == 1  # the answer only


def test_a_link_kind_outside_the_allowed_set_is_refused_and_nothing_is_written(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _store(demo.path)
    model = scripted(plan_reply("Link"))
    request = "Create a link of kind dissolves_in from Halogens to Noble gases."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    out = state["output"]
    assert out["error"]["code"] == "invalid_input"
    assert "'dissolves_in' is not an allowed value" in out["error"]["message"]
    assert "related_to" in out["error"]["message"]
    assert _store(demo.path) == before


def test_a_request_naming_the_tool_or_its_argument_is_no_refused_value(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(plan_reply("Link"))
    request = "Call link_concepts with the kind dissolves_in, from Halogens to Noble gases."
    out = run_agent_graph("knowledge_graph", model, demo.path, request)["output"]
    assert out["error"]["message"].startswith("'dissolves_in' is not an allowed value")


@pytest.mark.parametrize(
    ("request_text", "fragment"),
    [
        ("   \n\t ", "The request is empty"),
        ("Flag card 3: " + "x" * 100_000, "characters long"),
        ("Flag card 3\x00 now\x1b", "control characters (U+0000, U+001B)"),
        ("Markiere die Karte drei als fehlerhaft bitte sofort", "English, French or Spanish"),
    ],
)
def test_bad_input_is_refused_before_anything_runs(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run, request_text: str, fragment: str
) -> None:
    before = _store(demo.path)
    model = scripted(plan_reply("Flag"))
    state = run_agent_graph("governance", model, demo.path, request_text)
    out = state["output"]
    assert out["error"]["code"] == "invalid_input" and fragment in out["error"]["message"]
    assert _tools(state) == []
    assert _store(demo.path) == before


def test_another_agents_job_is_refused(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    before = _store(demo.path)
    model = scripted(plan_reply("Sweep"))
    request = "Write three new flashcards about glaciers into deck 3."
    state = run_agent_graph("governance", model, demo.path, request)
    assert state["output"]["error"]["code"] == "invalid_input"
    assert "not something the governance agent does" in state["output"]["error"]["message"]
    assert _store(demo.path) == before


def test_a_one_call_agent_flags_both_cards_named_with_the_reason_the_model_wrote(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        tools_reply(call("flag_card", {"card_id": 40, "reason": "wrong", "severity": "high"})),
        structured("GovernanceReport", flagged=[], cards_scanned=0, summary="Flagged."),
        **SMALL,
    )
    request = "Marca las tarjetas 40 y 41, ambas tienen errores."
    state = run_agent_graph("governance", model, demo.path, request)
    flags = [a for t, a, _ in _tools(state) if t == "flag_card"]
    assert [(a["card_id"], a["reason"]) for a in flags] == [(40, "wrong"), (41, "wrong")]
    with sqlite3.connect(demo.path) as conn:
        rows = conn.execute("SELECT card_id FROM card_flags WHERE reason = 'wrong'").fetchall()
    assert sorted(r[0] for r in rows) == [40, 41]
