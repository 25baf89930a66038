"""Each agent, scripted over the demo store: the output schema and the store's end state."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.agents import default_registry, schemas
from noema_graph.agents.learners import Learner
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.state.output import AgentOutput
from tests.scripted import call, plan_reply, reflection_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]


def _output(state: dict[str, Any], schema: type[Any]) -> tuple[AgentOutput, Any]:
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.validated is True, out
    assert out.metadata.estimated_cost_usd is not None and out.metadata.estimated_cost_usd > 0
    return out, schema.model_validate(out.result)


def _rows(db: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def test_learning_picks_a_due_card(scripted: Any, demo: DemoSummary, run_agent_graph: Run) -> None:
    with LearningStore.open(demo.path) as store:
        due = store.call("list_due_cards", user_id=1, limit=10)
    overdue = [c for c in due.cards if c.due is not None]
    pick = min(overdue, key=lambda c: c.retrievability)
    model = scripted(
        plan_reply("Pick the next card"),
        tools_reply(call("list_due_cards", {"user_id": 1, "limit": 10})),
        text(f"card {pick.card.id} has the lowest recall"),
        structured(
            "NextCard",
            card_id=pick.card.id,
            reason="lowest retrievability",
            expected_recall=pick.retrievability,
        ),
    )
    state = run_agent_graph("learning", model, demo.path, "What should I study next?")
    out, result = _output(state, schemas.NextCard)
    assert out.metadata.agent_name == "learning" and out.metadata.tools_used == ["list_due_cards"]
    with LearningStore.open(demo.path) as store:
        due_now = store.call("list_due_cards", user_id=1, limit=500, include_new=False)
    assert result.card_id in {c.card.id for c in due_now.cards}
    # the run named the learner (injected into the call), never the request's text
    assert model.prompts[0][-1].content == "What should I study next?"
    tool = next(s for s in out.reasoning.steps if s.kind == "tool")
    assert tool.action is not None and tool.action.input["user_id"] == 1
    assert "learning agent" in model.prompts[0][0].content


def test_diagnostic_reads_stats_and_history(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    with LearningStore.open(demo.path) as store:
        stats = store.call("learning_stats", user_id=1)
    model = scripted(
        plan_reply("Diagnose"),
        tools_reply(  # the run's learner (ada, 1) is injected into both calls
            call("learning_stats", {"user_id": 1}),
            call("get_review_history", {"user_id": 1, "limit": 20}),
        ),
        text("retention and lapses read"),
        structured(
            "Diagnosis",
            retention=stats.retention,
            lapses=stats.lapses,
            patterns=["over-confident answers"],
            weak_areas=["Spanish verbs"],
            summary="Decent retention.",
        ),
    )
    state = run_agent_graph("diagnostic", model, demo.path, "How am I doing?")
    _, result = _output(state, schemas.Diagnosis)
    assert result.lapses == stats.lapses
    tool_steps = [s for s in state["output"]["reasoning"]["steps"] if s["kind"] == "tool"]
    assert {s["action"]["tool"] for s in tool_steps} == {"learning_stats", "get_review_history"}
    assert all(s["action"]["output"]["status"] == "success" for s in tool_steps)


def test_content_generation_creates_valid_cards(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    (last,) = _rows(demo.path, "SELECT max(id) FROM cards")[0]
    new = [
        {"front": "Which gas makes up most of Earth's air?", "back": "Nitrogen"},
        {"kind": "cloze", "front": "{{c1::Oxygen}} is about 21% of air.", "back": "Oxygen"},
    ]
    model = scripted(
        plan_reply("Check for duplicates", "Create the cards"),
        tools_reply(call("search_cards", {"query": "nitrogen"})),
        text("no duplicates"),
        tools_reply(call("create_cards", {"deck_id": 2, "cards": new})),
        reflection_reply("continue"),  # every third iteration
        text("created two cards"),
        structured(
            "GeneratedCards", deck_id=2, card_ids=[last + 1, last + 2], summary="Air gases."
        ),
    )
    state = run_agent_graph("content_generation", model, demo.path, "Two cards on air, deck 2.")
    _, result = _output(state, schemas.GeneratedCards)
    rows = _rows(
        demo.path, "SELECT id, deck_id, kind, front, back FROM cards WHERE id > ? ORDER BY id", last
    )
    assert [r[0] for r in rows] == result.card_ids == [last + 1, last + 2]
    assert all(r[1] == 2 and r[3].strip() and r[4].strip() for r in rows)
    assert rows[1][2] == "cloze"
    with LearningStore.open(demo.path) as store:
        issues = store.call("find_quality_issues", deck_id=2).issues
    assert not {i.card_id for i in issues} & set(result.card_ids)


def test_socratic_tutor_keeps_the_dialogue_on_one_thread(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    turn = {"concept": "Valence electrons", "hint": "Count them.", "understanding": "partial"}
    model = scripted(
        plan_reply("Ask a first question"),
        tools_reply(call("search_cards", {"query": "noble"})),
        text("asked about shells"),
        structured("SocraticTurn", question="What fills neon's outer shell?", **turn),
        plan_reply("Ask a follow-up"),
        text("asked a follow-up"),
        structured("SocraticTurn", question="So why would neon not react?", **turn),
    )
    saver = InMemorySaver()
    first = run_agent_graph(
        "socratic_tutor", model, demo.path, "Why are noble gases inert?", checkpointer=saver
    )
    second = run_agent_graph(
        "socratic_tutor", model, demo.path, "Is it about electrons?", checkpointer=saver
    )
    _output(first, schemas.SocraticTurn)
    _, result = _output(second, schemas.SocraticTurn)
    assert result.question.startswith("So why")
    contents = [str(m.content) for m in model.prompts[4]]
    assert any("Why are noble gases inert?" in c for c in contents)  # turn 2 saw turn 1


def test_calibration_reports_the_store_figures(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    with LearningStore.open(demo.path) as store:
        figures = store.call("compute_calibration", user_id=2)
    model = scripted(
        plan_reply("Measure calibration"),
        tools_reply(call("compute_calibration", {"user_id": 2})),
        text(f"brier {figures.brier}"),
        structured(
            "CalibrationAdvice",
            brier=figures.brier,
            ece=figures.ece,
            bias=figures.bias,
            advice="Rate lower.",
        ),
    )
    ben = Learner(2, "ben")  # the request names the learner whose id the call uses
    state = run_agent_graph("calibration", model, demo.path, "Am I calibrated?", learner=ben)
    _, result = _output(state, schemas.CalibrationAdvice)
    # answer_sources: the figures are the tool's (its view rounds them to three places)
    assert result.bias == pytest.approx(figures.bias, abs=5e-4) and figures.bias is not None
    assert figures.bias > 0  # ben is over-confident in the demo
    assert default_registry().get("calibration").permissions == ("fs:read",)


def test_ingestion_stores_chunks(scripted: Any, demo: DemoSummary, run_agent_graph: Run) -> None:
    body = "Plants turn light into sugar. " * 30 + "\n\nChlorophyll absorbs red and blue light."
    model = scripted(
        plan_reply("Ingest", "Read back"),
        tools_reply(call("ingest_text", {"title": "Photosynthesis", "text": body})),
        text("stored"),
        tools_reply(call("get_chunks", {"source_id": demo.source_id + 1})),
        reflection_reply("continue"),
        text("read back"),
        structured(
            "IngestionReport",
            source_id=demo.source_id + 1,
            chunk_count=1,
            key_concepts=["Photosynthesis"],
            summary="How plants make sugar.",
        ),
    )
    state = run_agent_graph("ingestion", model, demo.path, "Ingest my note on photosynthesis.")
    _, result = _output(state, schemas.IngestionReport)
    sources = _rows(demo.path, "SELECT id, title FROM sources WHERE title = 'Photosynthesis'")
    assert sources == [(result.source_id, "Photosynthesis")]
    assert (
        _rows(demo.path, "SELECT count(*) FROM chunks WHERE source_id = ?", result.source_id)[0][0]
        >= 1
    )


def test_knowledge_graph_links_concepts(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    link = {"source": "Atomic number", "target": "Noble gases", "kind": "prerequisite_of"}
    model = scripted(
        plan_reply("Link"),
        tools_reply(call("get_concept_graph", {"concept": "Noble gases", "depth": 1})),
        tools_reply(call("link_concepts", link)),
        text("linked"),
        structured("ConceptLinks", links=[link], summary="Atomic number comes first."),
    )
    request = "Link Atomic number to Noble gases as prerequisite_of."
    state = run_agent_graph("knowledge_graph", model, demo.path, request)
    _output(state, schemas.ConceptLinks)
    with LearningStore.open(demo.path) as store:
        graph = store.call("get_concept_graph", concept="Noble gases", depth=1)
    assert any((x.source, x.target, x.kind) == tuple(link.values()) for x in graph.links), (
        graph.links
    )


def test_taxonomy_curator_moves_a_card(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    ((category,),) = _rows(demo.path, "SELECT category_id FROM cards WHERE id = 55")
    ((target,),) = _rows(demo.path, "SELECT min(id) FROM categories WHERE id != ?", category)
    ((name,),) = _rows(demo.path, "SELECT name FROM categories WHERE id = ?", target)
    model = scripted(
        plan_reply("Move the card"),
        tools_reply(call("list_categories", {})),
        tools_reply(call("move_card", {"card_id": 55, "category_id": target})),
        text("moved"),
        structured(
            "TaxonomyReport",
            moves=[{"card_id": 55, "category_id": target}],
            suggestions=[],
            summary="One card moved.",
        ),
    )
    request = f"Re-file card 55 under the {name} category."
    state = run_agent_graph("taxonomy_curator", model, demo.path, request)
    _output(state, schemas.TaxonomyReport)
    assert _rows(demo.path, "SELECT category_id FROM cards WHERE id = 55") == [(target,)]


def test_governance_flags_the_seeded_bad_cards(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    with LearningStore.open(demo.path) as store:
        report = store.call("find_quality_issues")
    issues = {i.card_id: i for i in report.issues}
    bad = sorted({cid for ids in demo.bad_cards.values() for cid in ids})
    assert set(bad) <= set(issues)
    model = scripted(
        plan_reply("Find and flag"),
        tools_reply(call("flag_quality_issues", {})),
        text(f"flagged {len(bad)} cards"),  # the answer-only turn after the one result
        structured(
            "GovernanceReport",
            flagged=[
                {"card_id": c, "issue": issues[c].kind, "severity": issues[c].severity} for c in bad
            ],
            cards_scanned=report.cards_scanned,
            summary="Seeded problems flagged.",
        ),
    )
    state = run_agent_graph("governance", model, demo.path, "Check the cards.")
    _, result = _output(state, schemas.GovernanceReport)
    flagged = {row[0] for row in _rows(demo.path, "SELECT card_id FROM card_flags")}
    assert set(bad) <= flagged
    assert {f.card_id for f in result.flagged} == set(bad)
    # the turn after the result offered no tools, and the answer saw the real findings
    assert "Tools are not available" in str(model.prompts[2][0].content)
    assert '"card_id":205' in str(model.prompts[3][-1].content)


def test_a_bad_tool_argument_is_an_observation_not_a_crash(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        plan_reply("Pick"),
        tools_reply(
            call("list_due_cards", {"user_id": 999, "limit": "many"}),
            call("list_due_cards", {"limit": 5, "deck_id": 4}),
        ),
        text("gave up"),
        # no structured answer is asked for: with no tool result it could only be invented
    )
    state = run_agent_graph("learning", model, demo.path, "Next?")
    steps = [s for s in state["output"]["reasoning"]["steps"] if s["kind"] == "tool"]
    # the schema check answers a wrong type before the tool runs, naming the argument (the
    # user_id the model wrote is dropped: the run's learner is injected)
    assert steps[0]["observation"] == (
        "Invalid argument 'limit' for tool 'list_due_cards': expected integer, got 'many'."
    )
    # an argument the agent is not offered is refused the same way
    assert steps[1]["observation"].startswith("Invalid argument")
    assert "deck_id" in steps[1]["observation"]
    calls = state["output"]["metadata"]["tool_calls"]
    assert [c["status"] for c in calls] == ["error", "error"]
    # every tool call failed: whatever was answered is not a success
    assert not state["output"]["success"] and state["output"]["validated"] is False
    assert state["output"]["error"]["code"] == "unvalidated"
    assert state["output"]["result"] == "Pick: gave up"


def test_write_tools_are_denied_to_read_only_agents(scripted: Any, demo: DemoSummary) -> None:
    from noema_graph.agents import domain_registry

    tools = domain_registry(demo.path, ["flag_card"]).as_langchain_tools(permissions=("fs:read",))
    message = tools[0].invoke(
        {"name": "flag_card", "args": {"card_id": 1, "reason": "x"}, "id": "c", "type": "tool_call"}
    )
    assert message.status == "error" and "permission denied" in message.content
    assert _rows(demo.path, "SELECT count(*) FROM card_flags") == [(0,)]
