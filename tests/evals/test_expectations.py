"""Item expectations: load-time checks, the store comparison, refusals and the state verdict."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.evals import NOEMA_TASKS, TrajectoryEvaluator, load_dataset
from noema_graph.evals.expectations import item_expectations, load_expectations
from noema_graph.evals.state import Change, judge_state, store_changes
from noema_graph.noema import DemoSummary
from noema_graph.noema.schema import HISTORY_TABLES
from noema_graph.trajectory.schema import EvalItem, Trajectory


def _item(**fields: Any) -> EvalItem:
    return EvalItem.model_validate({"id": "x-1", "input": "do it", **fields})


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"expected_success": False, "expected_error_code": "nope"}, "expected_error_code"),
        ({"expected_error_code": "not_found"}, "expected_error_code"),
        ({"expected_state": [{"table": "cards", "new": True, "key": {"id": 1}}]}, "expected_state"),
        ({"expected_state": [{"table": "cards", "values": {"front": "a"}}]}, "expected_state"),
        ({"expected_state": [{"table": "cards", "key": {"id": 1}, "colour": 1}]}, "expected_state"),
        ({"store_unchanged": "yes"}, "store_unchanged"),
        (
            {"store_unchanged": True, "expected_state": [{"table": "cards", "new": True}]},
            "store_unchanged",
        ),
        (
            {"expected_success": False, "expected_state": [{"table": "cards", "new": True}]},
            "expected_state",
        ),
        (
            {"store_unchanged": ["cards"], "expected_state": [{"table": "cards", "new": True}]},
            "store_unchanged",
        ),
        ({"expected_state": [{"table": "cards", "new": True, "count": 0}]}, "expected_state"),
        ({"expected_state": [{"table": "cards", "new": True, "count": {"$x": 1}}]}, "expected"),
    ],
)
def test_a_malformed_expectation_names_the_item_and_the_field(
    fields: dict[str, Any], where: str
) -> None:
    with pytest.raises(ConfigurationError, match=rf"item 'x-1': {where}"):
        item_expectations(_item(**fields))


@pytest.mark.parametrize(
    ("row", "where", "named"),
    [
        ({"table": "cardz", "new": True}, "table", "cardz"),
        ({"table": "cards", "key": {"id": 1}, "values": {"colour": 2}}, "values", "colour"),
        ({"table": "cards", "key": {"uid": 1}, "deleted": True}, "key", "uid"),
    ],
)
def test_a_table_or_column_the_store_lacks_is_named_at_load_time(
    demo_master: DemoSummary, row: dict[str, Any], where: str, named: str
) -> None:
    item = _item(expected_state=[row])
    match = rf"item 'x-1': expected_state\[0\]\.{where}.*{named}"
    with pytest.raises(ConfigurationError, match=match):
        load_expectations([item], demo_master.path)
    frozen = _item(store_unchanged=["reviews", "nowhere"])
    with pytest.raises(ConfigurationError, match=r"store_unchanged.*nowhere"):
        load_expectations([frozen], demo_master.path)


def test_the_shipped_task_set_loads_and_its_write_items_declare_their_changes(
    demo_master: DemoSummary,
) -> None:
    items = list(load_dataset(NOEMA_TASKS).dataset)
    found = load_expectations(items, demo_master.path)
    writers = {"content_generation", "ingestion", "knowledge_graph", "governance"}
    for item in items:
        if item.tag("agent") in writers:
            assert found[item.id].expected_state, item.id


def _copy(master: str, target: Path) -> Path:
    source, copy = sqlite3.connect(master), sqlite3.connect(target)
    source.backup(copy)
    source.close()
    copy.close()
    return target


def test_store_changes_lists_rows_and_leaves_out_history_and_search_tables(
    demo_master: DemoSummary, tmp_path: Path
) -> None:
    copy = _copy(demo_master.path, tmp_path / "copy.sqlite")
    db = sqlite3.connect(copy)
    db.execute("UPDATE cards SET front = 'changed' WHERE id = 7")  # fires the FTS triggers
    db.execute("DELETE FROM card_flags WHERE id = (SELECT MIN(id) FROM card_flags)")
    db.execute("INSERT INTO concepts (name, description) VALUES ('Fresh', '')")
    db.execute("DELETE FROM card_states WHERE user_id = 2 AND card_id = 7")
    for table in HISTORY_TABLES:
        db.execute(f"DELETE FROM {table}")
    db.commit()
    db.close()
    changes = store_changes(copy, demo_master.path)
    kinds = {(c.table, c.kind) for c in changes}
    assert ("cards", "changed") in kinds and ("concepts", "new") in kinds
    assert ("card_states", "deleted") in kinds
    assert not any(c.table.startswith("cards_fts") or c.table in HISTORY_TABLES for c in changes)
    card = next(c for c in changes if c.table == "cards")
    assert card.key == {"id": 7} and card.after and card.after["front"] == "changed"
    state = next(c for c in changes if c.table == "card_states")
    assert state.key == {"user_id": 2, "card_id": 7} and state.after is None


def _change(table: str, kind: str, key: dict[str, Any], before: Any, after: Any) -> Change:
    return Change(table=table, kind=kind, key=key, before=before, after=after)


def test_judge_state_matches_changed_new_and_deleted_rows() -> None:
    moved = _change(
        "cards", "changed", {"id": 5},
        {"id": 5, "category_id": 1, "front": "a", "updated_at": "t0"},
        {"id": 5, "category_id": 2, "front": "a", "updated_at": "t1"},
    )  # fmt: skip
    flags = [
        _change("card_flags", "new", {"id": 9 + i}, None, {"id": 9 + i, "card_id": 3})
        for i in range(2)
    ]
    gone = _change("card_flags", "deleted", {"id": 1}, {"id": 1, "card_id": 4}, None)
    wanted = item_expectations(
        _item(
            expected_state=[
                {"table": "cards", "key": {"id": 5}, "values": {"category_id": {"$gte": 2}}},
                {"table": "card_flags", "new": True, "count": 2, "values": {"card_id": 3}},
                {"table": "card_flags", "key": {"id": 1}, "deleted": True},
            ]
        )
    )
    assert judge_state([moved, *flags, gone], wanted).ok
    short = judge_state([moved, flags[0], gone], wanted)
    assert not short.ok and "1 such new rows" in str(short.missing)
    rewrote = moved.model_copy(update={"after": {**(moved.after or {}), "front": "b"}})
    stray = judge_state([rewrote, *flags, gone], wanted)
    assert not stray.ok and stray.unexpected[0]["columns"] == ["front"]
    nothing = judge_state([moved], item_expectations(_item()))
    assert not nothing.ok and nothing.unexpected[0]["before"]["category_id"] == 1


def test_store_unchanged_tables_must_not_change() -> None:
    flag = _change("card_flags", "new", {"id": 9}, None, {"id": 9, "card_id": 3})
    only_reviews = item_expectations(_item(store_unchanged=["reviews"]))
    assert judge_state([], only_reviews).ok
    assert not judge_state([flag], only_reviews).ok  # changes nobody expects still fail
    assert not judge_state([flag], item_expectations(_item(store_unchanged=True))).ok


def _refusal_run(success: bool, code: str | None, changes: list[Any]) -> Trajectory:
    meta = {"success": success, "error": code, "store_changes": changes}
    return Trajectory(input="x", final_output=None, metadata=meta)


def test_a_refusal_passes_only_unsuccessful_with_its_code_and_the_store_unchanged() -> None:
    item = _item(expected_success=False, expected_error_code=["not_found", "forbidden"])
    evaluator = TrajectoryEvaluator()
    right = evaluator.score(item, _refusal_run(False, "not_found", []))
    assert right.passed and right.outcome_ok and right.final_score == 1.0
    other_code = evaluator.score(item, _refusal_run(False, "max_iterations", []))
    assert not other_code.passed and other_code.outcome_ok is False
    went_ahead = evaluator.score(item, _refusal_run(True, None, []))
    assert not went_ahead.passed
    flag = _change("card_flags", "new", {"id": 9}, None, {"id": 9, "card_id": 3}).model_dump()
    wrote = evaluator.score(item, _refusal_run(False, "forbidden", [flag]))
    assert not wrote.passed and wrote.state_ok is False and wrote.unasked_changes


def test_the_docs_example_of_each_kind_loads_against_the_demo_store(
    demo_master: DemoSummary,
) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text("utf-8")
    section = page.split("**The dataset format**", 1)[1]
    block = section.split("```json\n", 1)[1].split("```", 1)[0]
    items = [EvalItem.model_validate(raw) for raw in json.loads(block)["dataset"]]
    found = load_expectations(items, demo_master.path)
    assert found["taxonomy_curator-fr-1"].refusal
    assert found["tutor-read-only"].frozen_tables == ("reviews", "card_states")
    kinds = [row.kind for row in found["rows-of-each-kind"].expected_state]
    assert kinds == ["new", "new", "deleted"]


def test_an_item_without_expected_output_is_graded_on_the_store_alone() -> None:
    moved = _change("cards", "changed", {"id": 5}, {"category_id": 1}, {"category_id": 2})
    item = _item(
        expected_state=[{"table": "cards", "key": {"id": 5}, "values": {"category_id": 2}}]
    )
    run = Trajectory(input="x", final_output={"any": "answer"}, metadata={"store_changes": [moved]})
    assert TrajectoryEvaluator().score(item, run).passed
    nothing = run.model_copy(update={"metadata": {"store_changes": []}})
    assert not TrajectoryEvaluator().score(item, nothing).passed
