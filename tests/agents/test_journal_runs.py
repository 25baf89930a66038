"""Agent runs write the change journal: thread, step and call id; dry runs; resume after undo."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph import changes, undo
from noema_graph.context import RunContext
from noema_graph.noema import DemoSummary
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]


def _one(path: str, sql: str, *params: Any) -> Any:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, params).fetchone()[0]


def _move(scripted: Any, card: int, target: int, call_id: str) -> Any:
    return scripted(
        plan_reply("Move the card"),
        tools_reply(call("list_categories", {}, f"{call_id}-list")),
        tools_reply(call("move_card", {"card_id": card, "category_id": target}, call_id)),
        text("moved"),
        structured(
            "TaxonomyReport",
            moves=[{"card_id": card, "category_id": target}],
            suggestions=[],
            summary="One card moved.",
        ),
    )


def _request(path: str, card: int, target: int) -> str:
    """Return a request that names the card and the category it asks the card moved into."""
    name = _one(path, "SELECT name FROM categories WHERE id = ?", target)
    return f"Move card {card} into the {name} category."


def _target(path: str, card: int) -> tuple[int, int]:
    category = _one(path, "SELECT category_id FROM cards WHERE id = ?", card)
    return category, _one(path, "SELECT min(id) FROM categories WHERE id != ?", category)


def test_a_run_journals_its_write_with_thread_step_and_call(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    category, target = _target(demo.path, 55)
    model = _move(scripted, 55, target, "call-move")
    run_agent_graph(
        "taxonomy_curator", model, demo.path, _request(demo.path, 55, target), thread="th-1"
    )
    (change,) = changes("th-1", db=demo.path)
    assert (change.thread_id, change.call_id, change.tool) == ("th-1", "call-move", "move_card")
    assert change.step is not None and change.step > 0
    assert change.before is not None and change.before["category_id"] == category
    assert change.text.startswith("card 55: category ")
    report = undo("th-1", db=demo.path)
    assert report.rows == 1
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = 55") == category


def test_a_dry_run_writes_nothing_and_the_tool_says_what_it_would_change(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    category, target = _target(demo.path, 55)
    model = _move(scripted, 55, target, "call-move")
    state = run_agent_graph(
        "taxonomy_curator",
        model,
        demo.path,
        _request(demo.path, 55, target),
        thread="th-dry",
        context=RunContext(user_id="ada", dry_run=True),
    )
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = 55") == category
    answer = next(
        m for m in state["messages"] if isinstance(m, ToolMessage) and m.name == "move_card"
    )
    assert '"dry_run": true' in str(answer.content) or '"dry_run":true' in str(answer.content)
    assert "would change category" in str(answer.content)
    (change,) = changes("th-dry", db=demo.path)
    assert change.dry_run and change.text.startswith("card 55: would change category")


def test_resuming_a_thread_after_an_undo_refuses_to_write_again(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    category, target = _target(demo.path, 55)
    saver = InMemorySaver()
    model = _move(scripted, 55, target, "call-move")
    run_agent_graph(
        "taxonomy_curator",
        model,
        demo.path,
        _request(demo.path, 55, target),
        thread="th-2",
        checkpointer=saver,
    )
    report = undo("th-2", db=demo.path)
    again = _move(scripted, 55, target, "call-move-2")
    state = run_agent_graph(
        "taxonomy_curator",
        again,
        demo.path,
        _request(demo.path, 55, target),
        thread="th-2",
        checkpointer=saver,
    )
    refused = [
        m
        for m in state["messages"]
        if isinstance(m, ToolMessage) and m.tool_call_id == "call-move-2"
    ]
    assert refused and refused[0].status == "error"
    assert report.undo_id in str(refused[0].content)
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = 55") == category


def test_the_facade_reports_the_changes_in_the_output_metadata(
    scripted: Any, demo: DemoSummary
) -> None:
    from noema_graph import run_agent

    category, target = _target(demo.path, 55)
    dry = run_agent(
        "taxonomy_curator",
        _request(demo.path, 55, target),
        user_id="ada",
        model=_move(scripted, 55, target, "call-move"),
        db=demo.path,
        thread_id="fa-dry",
        dry_run=True,
    )
    assert dry.metadata.changes == {"count": 1, "tables": ["cards"], "dry_run": True, "undone": 0}
    assert _one(demo.path, "SELECT category_id FROM cards WHERE id = 55") == category
    real = run_agent(
        "taxonomy_curator",
        _request(demo.path, 55, target),
        user_id="ada",
        model=_move(scripted, 55, target, "call-move"),
        db=demo.path,
        thread_id="fa-real",
    )
    assert real.metadata.changes == {"count": 1, "tables": ["cards"], "dry_run": False, "undone": 0}
