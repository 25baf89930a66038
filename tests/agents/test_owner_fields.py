"""Every domain operation is scoped to the run's learner or takes none; the model never sees
an owner field (native tool schemas, the ReAct prompt and grammar, the recorded tool specs)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.agents import build_agent, default_registry
from noema_graph.agents.domain_tools import domain_registry, domain_spec
from noema_graph.agents.learner_context import run_learner
from noema_graph.context import RunContext
from noema_graph.evals.runner import tool_specs
from noema_graph.models.grammar import react_grammar
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.noema.operations import DOMAIN_OPERATIONS, OWNER_FIELDS
from noema_graph.storage.sql.driver import Op, Statement
from noema_graph.tools.injection import injected_of
from tests.agents.conftest import PRICES
from tests.scripted import ScriptedChatModel, plan_reply, structured, text

AGENTS = [d.name for d in default_registry().get_all()]


def _samples(db: str) -> dict[str, dict[str, Any]]:
    """Arguments valid on the demo store for every domain operation (owner fields left out)."""
    with sqlite3.connect(db) as conn:
        card, deck, category, source = (
            conn.execute(f"SELECT min(id) FROM {table}").fetchone()[0]
            for table in ("cards", "decks", "categories", "sources")
        )
        first, second = (r[0] for r in conn.execute("SELECT name FROM concepts LIMIT 2"))
    return {
        "list_due_cards": {"limit": 5},
        "get_card": {"card_id": card},
        "get_review_history": {"limit": 5},
        "record_review": {"card_id": card, "rating": 4, "response_time_ms": 1500},
        "schedule_preview": {"card_id": card},
        "create_cards": {"deck_id": deck, "cards": [{"front": "Q?", "back": "A"}]},
        "update_card": {"card_id": card, "tags": ["checked"]},
        "flag_card": {"card_id": card, "reason": "unclear wording"},
        "search_cards": {"query": "the"},
        "get_concept_graph": {},
        "link_concepts": {"source": first, "target": second, "kind": "related_to"},
        "list_categories": {},
        "move_card": {"card_id": card, "category_id": category},
        "compute_calibration": {},
        "learning_stats": {},
        "ingest_text": {"title": "Note", "text": "One sentence. Another sentence."},
        "get_chunks": {"source_id": source},
        "find_quality_issues": {},
        "flag_quality_issues": {},
    }


def _learner_tables(db: str) -> set[str]:
    """Return the tables that hold a learner's rows: ``users`` and those with a user_id."""
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        owned = {
            t
            for t in tables
            if "user_id" in {c[1] for c in conn.execute(f"PRAGMA table_info('{t}')")}
        }
    return owned | {"users"}


def _recorded(op: Op[Any], log: list[Statement]) -> Op[Any]:
    """Run ``op``, appending every statement it yields to ``log``."""
    try:
        statement = next(op)
    except StopIteration as stop:
        return stop.value
    while True:
        log.append(statement)
        outcome = yield statement
        try:
            statement = op.send(outcome)
        except StopIteration as stop:
            return stop.value


def _values(statement: Statement) -> list[Any]:
    sets = statement.many or [statement.params]
    return [v for p in sets for v in (p.values() if isinstance(p, Mapping) else p)]


def test_the_list_covers_every_domain_operation(demo: DemoSummary) -> None:
    assert set(_samples(demo.path)) == set(DOMAIN_OPERATIONS)  # a new operation joins the list


@pytest.mark.parametrize("name", sorted(DOMAIN_OPERATIONS))
def test_every_domain_operation_is_scoped_or_takes_no_learner(name: str, demo: DemoSummary) -> None:
    operation = DOMAIN_OPERATIONS[name]
    owner = operation.owner_fields
    learner = 2  # not the first learner: an unscoped query of the first one would not match
    arguments = {**_samples(demo.path)[name], **dict.fromkeys(owner, learner)}
    log: list[Statement] = []
    with LearningStore.open(demo.path) as store:
        params = operation.input_model.model_validate(arguments)
        store.run(_recorded(operation.function(params), log), write=operation.writes)
    tables = _learner_tables(demo.path)
    touching = [s for s in log if any(re.search(rf"\b{t}\b", s.sql, re.IGNORECASE) for t in tables)]
    if not owner:  # it takes no learner: it never reads or writes a learner's rows
        assert touching == [], (name, [s.sql for s in touching])
        return
    assert touching, f"{name} names a learner but reads none of a learner's rows"
    for statement in touching:  # every statement on a learner's rows is scoped to it
        assert learner in _values(statement), (name, statement.sql)
        if not re.search(r"\busers\b", statement.sql, re.IGNORECASE):
            assert "user_id" in statement.sql, (name, statement.sql)
    # and its owner fields are the framework's, never the model's
    spec = domain_spec(name, demo.path, owner=run_learner(demo.path).owner)
    assert spec.injected is not None and spec.injected.fields == owner
    assert not owner & set(spec.json_schema()["properties"])


@pytest.mark.parametrize("agent", AGENTS)
def test_the_model_never_sees_an_owner_field(agent: str, demo: DemoSummary) -> None:
    definition = default_registry().get(agent)
    tools = domain_registry(
        demo.path, definition.tools, definition.tool_arguments, run_learner(demo.path).owner
    ).as_langchain_tools()
    for tool in tools:  # native: what bind_tools sends
        shown = convert_to_openai_tool(tool)["function"]["parameters"]
        assert not OWNER_FIELDS & set(shown.get("properties", {})), tool.name
        assert not OWNER_FIELDS & set(shown.get("required", [])), tool.name
        injected = injected_of(tool)
        assert (injected.fields if injected else frozenset()) == DOMAIN_OPERATIONS[
            tool.name
        ].owner_fields
    grammar = react_grammar(tools)  # ReAct: the embedded model's grammar
    assert not any(field in grammar for field in OWNER_FIELDS)
    for spec in tool_specs(agent):  # the tool specs a trajectory records
        assert not OWNER_FIELDS & set(spec["parameters"].get("properties", {})), spec["name"]


def test_a_react_call_that_writes_a_user_id_runs_for_the_runs_learner(
    demo: DemoSummary,
) -> None:
    with LearningStore.open(demo.path) as store:
        due = store.call("list_due_cards", user_id=1, limit=10)
        others = store.call("list_due_cards", user_id=2, limit=10)
    assert [c.card.id for c in due.cards] != [c.card.id for c in others.cards]
    card = due.cards[0]
    model = ScriptedChatModel(
        script=[
            plan_reply("Pick the next card"),
            text(
                "Thought: list them\nAction: list_due_cards\n"
                'Action Input: {"user_id": 2, "limit": 10}'
            ),
            text(f"Thought: done\nFinal Answer: card {card.card.id}"),
            structured(
                "NextCard",
                card_id=card.card.id,
                reason="first",
                expected_recall=card.retrievability,
            ),
        ]
    )
    graph = build_agent(
        "learning",
        model=model,
        db=demo.path,
        checkpointer=InMemorySaver(),
        overrides={**PRICES, "protocol": "react"},
    )
    state = graph.invoke(
        {"messages": [("user", "What next?")]},
        {"configurable": {"thread_id": "r"}},
        context=RunContext(user_id="ada"),
    )
    (step,) = [s for s in state["trace"] if s.kind == "tool"]
    assert step.action is not None and step.action.input == {"limit": 10, "user_id": 1}
    shown = [c["card_id"] for c in step.action.output["data"]["cards"]]
    assert shown == [c.card.id for c in due.cards]
    step_prompt = model.prompts[1][0].text  # the ReAct instructions list the tools
    assert "list_due_cards" in step_prompt and "user_id" not in step_prompt
