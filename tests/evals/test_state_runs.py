"""The end-state check against a hand-written SQL comparison, on 52 scripted agent runs.

Each run is a real agent run (scripted model, real tools) on an item of the task set, doing
what the item asks, something else, or more. A hand-written oracle then dumps every table of
the learner's data before (the master) and after (the run's copy) with plain ``SELECT *``,
finds the rows that differ, and judges the item's ``expected_state`` with its own queries;
the state module (``EXCEPT`` over an attached master, then :func:`judge_state`) must find
the same rows and the same verdict on every run.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from noema_graph.evals import NOEMA_TASKS, load_dataset, run_item
from noema_graph.evals.expectations import item_expectations
from noema_graph.evals.state import judge_state
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.trajectory.schema import EvalItem
from tests.scripted import ScriptedChatModel, call, plan_reply, structured, text, tools_reply

PRICES = {"price_overrides": {"scripted": (1.0, 2.0)}}
QUERY = "capital"
"""What the overreaching curator searches for before moving a card nobody named."""
KEYS = {
    "users": ("id",),
    "categories": ("id",),
    "decks": ("id",),
    "cards": ("id",),
    "concepts": ("id",),
    "card_concepts": ("card_id", "concept_id"),
    "concept_links": ("id",),
    "reviews": ("id",),
    "card_states": ("user_id", "card_id"),
    "sources": ("id",),
    "chunks": ("id",),
    "card_flags": ("id",),
}
"""The learner's tables and their keys, written out by hand."""


def _move(card: int, category: int, extra: tuple[str, int, int] | None) -> list[Any]:
    """Move ``card``; ``extra``: search (query) and move another card it finds too."""
    moves = [call("move_card", {"card_id": card, "category_id": category})]
    looked = [call("list_categories", {})]
    if extra is not None:
        looked.append(call("search_cards", {"query": extra[0]}))
        moves.append(call("move_card", {"card_id": extra[1], "category_id": extra[2]}))
    return [
        plan_reply("Move"),
        tools_reply(*looked),
        tools_reply(*moves),
        text("moved"),
        structured(
            "TaxonomyReport",
            moves=[{"card_id": card, "category_id": category}],
            suggestions=[],
            summary="Moved.",
        ),
    ]


def _create(deck: int, count: int, concepts: list[str] | None = None) -> list[Any]:
    cards = [
        {"front": f"Which noble gas is number {i}?", "back": f"Gas {i}", "concepts": concepts or []}
        for i in range(count)
    ]
    return [
        plan_reply("Create"),
        tools_reply(call("search_cards", {"query": "noble"})),
        tools_reply(call("create_cards", {"deck_id": deck, "cards": cards})),
        text("created"),
        structured("GeneratedCards", deck_id=deck, card_ids=[1], summary="Cards made."),
    ]


def _flag(cards: list[int], reasons: list[str]) -> list[Any]:
    flags = [
        call("flag_card", {"card_id": c, "reason": r}) for c, r in zip(cards, reasons, strict=True)
    ]
    return [
        plan_reply("Flag"),
        tools_reply(*flags),
        text("flagged"),
        structured(
            "GovernanceReport",
            flagged=[{"card_id": c, "issue": "ambiguous", "severity": "medium"} for c in cards],
            cards_scanned=1,
            summary="Flagged.",
        ),
    ]


def _next_card(user: int, card: int) -> list[Any]:
    return [
        plan_reply("Pick"),
        tools_reply(call("list_due_cards", {"user_id": user, "limit": 5})),
        text("the first card"),
        structured("NextCard", card_id=card, reason="most overdue", expected_recall=0.4),
    ]


def _scenarios(items: dict[str, EvalItem], other: int) -> list[tuple[str, list[Any]]]:
    """Return (item id, script) of every run: right, wrong and overreaching ones."""
    runs: list[tuple[str, list[Any]]] = []
    for n in range(1, 7):
        item = items[f"taxonomy_curator-{n}"]
        move = item.expected_trajectory[1].input  # type: ignore[index,union-attr]
        card, category = move["card_id"], move["category_id"]  # type: ignore[index]
        runs.append((item.id, _move(card, category, None)))
        runs.append((item.id, _move(card, category % 10 + 1, None)))
        runs.append((item.id, _move(card, category, (QUERY, other, category % 10 + 1))))
    for n in range(1, 7):
        item = items[f"content_generation-{n}"]
        deck, count = item.expected_output["deck_id"], item.expected_output["card_ids"]["$len"]
        runs += [(item.id, _create(deck, count)), (item.id, _create(deck, count + 1))]
        runs.append((item.id, _create(deck, count, ["Noble gases", "Brand new concept"])))
    for n in range(3, 6):
        item = items[f"governance-{n}"]
        card = item.expected_trajectory[0].input["card_id"]  # type: ignore[index,union-attr]
        runs.append((item.id, _flag([card], ["ambiguous answer"])))
        runs.append((item.id, _flag([card, card], ["ambiguous answer", "too long"])))
        runs.append((item.id, _flag([card, card], ["ambiguous answer", "ambiguous answer"])))
    for n in range(1, 7):
        item = items[f"learning-{n}"]
        user = item.expected_trajectory[0].input["user_id"]  # type: ignore[index,union-attr]
        runs.append((item.id, _next_card(user, item.expected_output["card_id"])))
    return runs


def _dump(db: Path) -> dict[str, dict[tuple[Any, ...], tuple[Any, ...]]]:
    """Return every learner table of ``db`` as {key: whole row}, by plain SELECTs."""
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    try:
        dumped: dict[str, dict[tuple[Any, ...], tuple[Any, ...]]] = {}
        for table, keys in KEYS.items():
            rows = connection.execute(f"SELECT * FROM {table}").fetchall()
            dumped[table] = {tuple(row[k] for k in keys): tuple(row) for row in rows}
        return dumped
    finally:
        connection.close()


def _oracle_differs(before: Path, after: Path) -> set[tuple[str, tuple[Any, ...]]]:
    old, new = _dump(before), _dump(after)
    return {
        (table, key)
        for table in KEYS
        for key in {*old[table], *new[table]}
        if old[table].get(key) != new[table].get(key)
    }


def _oracle_verdict(item: EvalItem, before: Path, after: Path) -> bool:
    """Judge the item's expected_state with hand-written queries on both stores."""
    differs = _oracle_differs(before, after)
    covered: set[tuple[str, tuple[Any, ...]]] = set()
    connection = sqlite3.connect(after)
    connection.execute("ATTACH DATABASE ? AS old", (str(before),))
    try:
        for row in item_expectations(item).expected_state:
            if row.new:
                where = " AND ".join(f"{column} = ?" for column in row.values) or "1"
                keys = ", ".join(KEYS[row.table])
                found = connection.execute(
                    f"SELECT {keys} FROM main.{row.table} WHERE ({keys}) NOT IN "
                    f"(SELECT {keys} FROM old.{row.table}) AND {where}",
                    tuple(row.values.values()),
                ).fetchall()
                if isinstance(row.count, dict):  # the task set uses {"$gte": n} only
                    if len(found) < row.count["$gte"]:
                        return False
                    covered |= {(row.table, tuple(r)) for r in found}
                    continue
                if len(found) < row.count:
                    return False
                covered |= {(row.table, (r[0],)) for r in found[: row.count]}
            else:
                key = tuple((row.key or {}).values())
                current = connection.execute(
                    f"SELECT {', '.join(row.values)} FROM main.{row.table} WHERE id = ?", key
                ).fetchone()
                if (row.table, key) not in differs or current != tuple(row.values.values()):
                    return False
                covered.add((row.table, key))
    finally:
        connection.close()
    return differs == covered


@pytest.fixture(scope="module")
def runs(demo_master: DemoSummary, tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """Run every scenario; return (item, trajectory, copy of the store) per run."""
    items = load_dataset(NOEMA_TASKS).by_id()
    with LearningStore.open(demo_master.path) as store:
        other = store.call("search_cards", query=QUERY).hits[0].card.id
    done: list[Any] = []
    for index, (item_id, script) in enumerate(_scenarios(items, other)):
        workdir = tmp_path_factory.mktemp(f"run{index}")
        model = ScriptedChatModel(script=script)
        item = items[item_id]
        trajectory = run_item(
            item, agent=item.tag("agent") or "", model=model,
            master=Path(demo_master.path), workdir=workdir,
            overrides={**PRICES, "request_reader": None},  # unasked writes reach the store
        )  # fmt: skip
        model.assert_complete()
        assert "run_error" not in trajectory.metadata, trajectory.metadata
        slug = "".join(c if c.isalnum() or c in "-_" else "_" for c in item.id)
        done.append((item, trajectory, workdir / f"{slug}.learning.sqlite"))
    return done


def test_the_state_check_agrees_with_a_hand_written_sql_comparison(
    runs: list[Any], demo_master: DemoSummary
) -> None:
    assert len(runs) >= 50
    master = Path(demo_master.path)
    verdicts: list[bool] = []
    for item, trajectory, copy in runs:
        changes = trajectory.metadata["store_changes"]
        found = {(c["table"], tuple(c["key"].values())) for c in changes}
        assert found == _oracle_differs(master, copy), item.id
        verdict = judge_state(changes, item_expectations(item))
        assert verdict.ok == _oracle_verdict(item, master, copy), (item.id, verdict)
        verdicts.append(verdict.ok)
    assert 15 <= sum(verdicts) <= len(verdicts) - 15  # both verdicts are well represented


def test_unasked_changes_name_table_key_before_and_after(runs: list[Any]) -> None:
    extra = next(
        (item, t)
        for item, t, _ in runs
        if item.tag("agent") == "taxonomy_curator" and len(t.metadata["store_changes"]) == 2
    )
    verdict = judge_state(extra[1].metadata["store_changes"], item_expectations(extra[0]))
    assert not verdict.ok and len(verdict.unexpected) == 1
    (stray,) = verdict.unexpected
    assert stray["table"] == "cards" and stray["kind"] == "changed"
    assert stray["before"]["category_id"] != stray["after"]["category_id"]
    assert stray["key"] == {"id": stray["after"]["id"]}
