"""An uncertain intent decision never writes: it asks (clarify), else runs the change dry.

Issue 33 item 1 and issue 37 item 4: the read-only answer that says what the run would
change uses the dry-run mechanism (the journal keeps the would-be changes). The decision is
scripted (the classifier returns ``uncertain`` with the move as the likeliest write); the
rest of the reading (references against the store) and the run are real.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from noema_graph import changes
from noema_graph.agents import build_agent
from noema_graph.agents.intent import IntentClassifier, IntentDecision
from noema_graph.context import RunContext
from noema_graph.nodes.human import agreed
from noema_graph.noema import DemoSummary
from tests.agents.conftest import PRICES
from tests.scripted import call, plan_reply, structured, text, tools_reply

CARD = 5


@pytest.fixture(autouse=True)
def _uncertain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every decision is uncertain, the move leading the question by less than the margin."""

    def decide(self: IntentClassifier, request: str) -> IntentDecision:
        return IntentDecision("uncertain", 0.004, {"move_card": 0.812, "question": 0.808})

    monkeypatch.setattr(IntentClassifier, "decide", decide)


def _one(path: str, sql: str, *params: Any) -> Any:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchone()[0]


def _setup(path: str) -> tuple[int, int, str, str]:
    """Return card 5's category, another one, and both names."""
    was = int(_one(path, "SELECT category_id FROM cards WHERE id = ?", CARD))
    target = int(_one(path, "SELECT min(id) FROM categories WHERE id != ?", was))
    names = [_one(path, "SELECT name FROM categories WHERE id = ?", c) for c in (was, target)]
    return was, target, str(names[0]), str(names[1])


def _model(scripted: Any, target: int, *, answered: bool = True) -> Any:
    replies = [
        plan_reply("Look at the card"),
        tools_reply(call("move_card", {"card_id": CARD, "category_id": target}, "mv")),
    ]
    if answered:
        replies += [
            text("done"),
            structured("TaxonomyReport", moves=[], suggestions=[], summary="Looked at it."),
        ]
    return scripted(*replies)


def _graph(model: Any, db: str, **overrides: Any) -> Any:
    return build_agent(
        "taxonomy_curator",
        model=model,
        db=db,
        checkpointer=InMemorySaver(),
        overrides={**PRICES, **overrides},
    )


def _invoke(graph: Any, value: Any, thread: str) -> dict[str, Any]:
    return graph.invoke(
        value, {"configurable": {"thread_id": thread}}, context=RunContext(user_id="ada")
    )


def test_without_questions_the_change_runs_dry_and_the_answer_says_what_it_would_change(
    scripted: Any, demo: DemoSummary
) -> None:
    was, target, old, new = _setup(demo.path)
    request = f"Card {CARD} and the {new} category, hmm."
    state = _invoke(_graph(_model(scripted, target), demo.path), {"messages": [request]}, "u1")
    reading = state["reading"]
    assert (reading.intent, reading.writes) == ("uncertain", ("move_card",))
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", CARD) == was
    (moved,) = [
        m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "mv"
    ]
    assert '"dry_run":true' in str(moved.content).replace(" ", "")
    (change,) = changes("u1", db=demo.path)
    assert change.dry_run and change.text == f"card {CARD}: would change category {old} -> {new}"
    decision = state["output"]["reasoning"]["decision"]
    assert decision.startswith("Nothing was changed: it is not clear")
    assert f"would change category {old} -> {new}" in decision


def test_with_questions_the_run_asks_naming_the_change_and_a_yes_makes_it(
    scripted: Any, demo: DemoSummary
) -> None:
    was, target, old, new = _setup(demo.path)
    graph = _graph(_model(scripted, target), demo.path, clarify=True)
    request = f"Card {CARD} and the {new} category, hmm."
    paused = _invoke(graph, {"messages": [request]}, "u2")
    (pause,) = paused["__interrupt__"]
    assert pause.value["type"] == "clarify"
    assert f"card {CARD}: would change category {old} -> {new}" in pause.value["question"]
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", CARD) == was
    state = _invoke(graph, Command(resume="Yes, do it."), "u2")
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", CARD) == target
    found = changes("u2", db=demo.path)
    assert [(c.dry_run, c.text) for c in found] == [
        (True, f"card {CARD}: would change category {old} -> {new}"),  # once, though run twice
        (False, f"card {CARD}: category {old} -> {new}"),
    ]
    assert "Nothing was changed" not in state["output"]["reasoning"]["decision"]


def test_with_questions_anything_but_a_yes_writes_nothing(scripted: Any, demo: DemoSummary) -> None:
    was, target, _, new = _setup(demo.path)
    graph = _graph(_model(scripted, target), demo.path, clarify=True)
    _invoke(graph, {"messages": [f"Card {CARD} and the {new} category, hmm."]}, "u3")
    state = _invoke(graph, Command(resume="no, I was only asking"), "u3")
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", CARD) == was
    assert all(c.dry_run for c in changes("u3", db=demo.path))
    moved = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "mv"]
    assert str(moved[-1].content).startswith("Not changed: the learner did not confirm.")


@pytest.mark.parametrize(
    ("answer", "yes"),
    [("yes", True), ("Oui, vas-y", True), ("Sí, claro", True), ("OK", True), ("no", False),
     ("not yet", False), ("", False), (None, False), ("maybe yes", False)],
)  # fmt: skip
def test_only_an_answer_that_starts_with_yes_agrees(answer: Any, yes: bool) -> None:
    assert agreed(answer) is yes


def test_on_the_small_model_path_the_bound_change_runs_dry(
    scripted: Any, demo: DemoSummary
) -> None:
    was, _, old, new = _setup(demo.path)
    model = scripted(
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Looked."),
        metadata={"noema_plans": False},
    )
    state = _invoke(
        _graph(model, demo.path), {"messages": [f"Card {CARD} and the {new} category, hmm."]}, "u4"
    )
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", CARD) == was
    (change,) = changes("u4", db=demo.path)
    assert change.dry_run and change.text == f"card {CARD}: would change category {old} -> {new}"
    assert state["output"]["result"]["moves"] == []  # a dry move is not reported as made
    assert f"would change category {old} -> {new}" in state["output"]["reasoning"]["decision"]


def test_the_cli_shows_what_an_unclear_request_would_change(
    scripted: Any, demo: DemoSummary, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from noema_graph.cli import app as cli_module

    monkeypatch.delenv("NOEMA_LEARNING_DB", raising=False)
    monkeypatch.delenv("NOEMA_DATABASE_URL", raising=False)
    monkeypatch.chdir(Path(demo.path).parent)
    was, target, old, new = _setup(demo.path)
    model = _model(scripted, target)
    options = cli_module.CliOptions(model_factory=lambda spec: model)
    request = f"Card {CARD} and the {new} category, hmm."
    args = ["run", "taxonomy_curator", request, "--data", demo.path, "--thread", "u5"]
    result = CliRunner().invoke(cli_module.app, args, obj=options)
    assert result.exit_code == 0, result.output
    assert "not written: the request did not clearly ask for a change; it would:" in result.output
    assert f"card {CARD}: would change category {old} -> {new}" in result.output
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = ?", CARD) == was
