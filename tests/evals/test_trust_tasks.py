"""The trust task set (issue 33): its shape, its ids in the sample store, its generator."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from noema_graph.agents import DEFINITIONS
from noema_graph.evals.runner import tool_schemas
from noema_graph.noema import DOMAIN_OPERATIONS, DemoSummary
from noema_graph.noema.schema import HISTORY_TABLES

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_trust_tasks.py"
DATASET = ROOT / "noema_graph" / "evals" / "datasets" / "noema_trust_tasks.json"
ITEM_KEYS = {
    "id",
    "input",
    "expected_output",
    "expected_trajectory",
    "expected_success",
    "expected_error_code",
    "store_unchanged",
    "expected_state",
    "tags",
}
REFUSAL_CODES = {"not_found", "invalid_input", "forbidden"}
ID_COLUMNS = {"card_id": "cards", "category_id": "categories", "deck_id": "decks"}
"""Columns of expected rows that name an existing row of another table."""
CONCEPT_COLUMNS = ("source_id", "target_id")


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_trust_tasks", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return _load_script()


@pytest.fixture(scope="module")
def items() -> list[dict[str, Any]]:
    return json.loads(DATASET.read_text(encoding="utf-8"))["dataset"]


@pytest.fixture(scope="module")
def store(demo_master: DemoSummary) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(f"file:{demo_master.path}?mode=ro", uri=True)
    yield db
    db.close()


def _tag(item: dict[str, Any], name: str) -> list[str]:
    prefix = f"{name}:"
    return [t[len(prefix) :] for t in item["tags"] if t.startswith(prefix)]


def _exists(db: sqlite3.Connection, table: str, row_id: Any) -> bool:
    found = db.execute(
        f"SELECT 1 FROM {table} WHERE id = ?", (row_id,)
    ).fetchone()  # table: a name of the store
    return found is not None


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _state_problems(db: sqlite3.Connection, change: dict[str, Any]) -> list[str]:
    """Return what is wrong with one expected_state entry against the sample store."""
    table = str(change.get("table"))
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if table not in tables or table in HISTORY_TABLES or table.startswith("cards_fts"):
        return [f"table {table!r} is not a learner's table"]
    columns = _columns(db, table)
    values: dict[str, Any] = change.get("values", {})
    problems = [
        f"{table}.{c} is no column" for c in [*values, *change.get("key", {})] if c not in columns
    ]
    if bool(change.get("new")) == ("key" in change):
        problems.append(f"{table}: give exactly one of key and new")
    if "key" in change and not _exists(db, table, change["key"].get("id")):
        problems.append(f"{table} {change['key']} is not in the sample store")
    for column, other in ID_COLUMNS.items():
        if column in values and not _exists(db, other, values[column]):
            problems.append(f"{table}.{column} {values[column]} is not in {other}")
    if table == "concept_links":
        problems += [
            f"concept {values[c]} is not in the sample store"
            for c in CONCEPT_COLUMNS
            if c in values and not _exists(db, "concepts", values[c])
        ]
    return problems


def _problems(db: sqlite3.Connection, item: dict[str, Any]) -> list[str]:
    """Return what is wrong with one item's shape (empty when it follows the format)."""
    problems = [f"unknown key {k!r}" for k in item if k not in ITEM_KEYS]
    if not isinstance(item.get("input"), str) or not item["input"].strip():
        problems.append("input must be a non-empty request")
    agents, users = _tag(item, "agent"), _tag(item, "user")
    if len(agents) != 1 or agents[0] not in {d.name for d in DEFINITIONS}:
        problems.append(f"one agent:NAME tag of a catalog agent, not {agents}")
    learners = {r[0] for r in db.execute("SELECT name FROM users")}
    if len(users) != 1 or users[0] not in learners:
        problems.append(f"one user:NAME tag of a sample learner, not {users}")
    if not _tag(item, "kind"):
        problems.append("at least one kind:... tag")
    if "store_unchanged" in item and "expected_state" in item:
        problems.append("store_unchanged and expected_state together")
    if item.get("expected_success", True) is False:
        codes = item.get("expected_error_code")
        codes = [codes] if isinstance(codes, str) else codes
        if not codes or not set(codes) <= REFUSAL_CODES:
            problems.append(f"a refusal needs codes from {sorted(REFUSAL_CODES)}, not {codes}")
        if "expected_state" in item:
            problems.append("a refusal writes nothing")
    elif "expected_error_code" in item:
        problems.append("expected_error_code only with expected_success false")
    for change in item.get("expected_state", []):
        problems += _state_problems(db, change)
    for call in item.get("expected_trajectory", []):
        if "user_id" in call["input"]:
            problems.append(f"{call['tool']}: user_id comes from the run, not the expected input")
    return problems


def test_the_shipped_file_is_what_the_generator_writes(
    script: ModuleType, demo_master: DemoSummary
) -> None:
    built = script.build_trust_tasks(demo_master.path)
    assert script.render(built) == DATASET.read_text(encoding="utf-8")


def test_every_item_follows_the_format(
    items: list[dict[str, Any]], store: sqlite3.Connection
) -> None:
    assert len({item["id"] for item in items}) == len(items)
    assert {item["id"]: _problems(store, item) for item in items if _problems(store, item)} == {}


def test_the_set_covers_every_agent_and_the_kinds_of_the_issue(
    items: list[dict[str, Any]],
) -> None:
    agents = Counter(_tag(item, "agent")[0] for item in items)
    kinds = Counter(kind for item in items for kind in _tag(item, "kind"))
    assert len(items) >= 66
    assert set(agents) == {d.name for d in DEFINITIONS}
    assert min(agents.values()) >= 5
    assert kinds["french"] + kinds["spanish"] >= 12
    for kind in ("indirect", "distracting_number", "card_by_text", "two_references"):
        assert kinds[kind] >= 3, kind
    for kind in ("question_to_writer", "mention", "missing_id", "missing_name", "bad_kind"):
        assert kinds[kind] >= 2, kind
    for kind in ("empty_input", "other_learner", "other_agent"):
        assert kinds[kind] >= 2, kind


def test_writes_are_declared_and_refusals_write_nothing(items: list[dict[str, Any]]) -> None:
    for item in items:
        tools = [call["tool"] for call in item.get("expected_trajectory", [])]
        writes = [t for t in tools if t in DOMAIN_OPERATIONS and DOMAIN_OPERATIONS[t].writes]
        assert bool(writes) == ("expected_state" in item), item["id"]
        if "refusal" in _tag(item, "kind"):
            assert item.get("expected_success") is False, item["id"]
            assert item.get("store_unchanged") is True, item["id"]
        if item.get("expected_success", True) is False:
            assert "refusal" in _tag(item, "kind"), item["id"]


def test_every_expected_call_is_one_the_agent_can_make(items: list[dict[str, Any]]) -> None:
    for item in items:
        schemas = tool_schemas(_tag(item, "agent")[0])
        for call in item.get("expected_trajectory", []):
            assert call["tool"] in schemas, (item["id"], call["tool"])
            properties = schemas[call["tool"]].get("properties", {})
            assert set(call["input"]) <= set(properties), (item["id"], call["input"])
            for key, value in call["input"].items():
                jsonschema.validate(value, properties[key])


def test_the_checks_catch_a_broken_item(
    items: list[dict[str, Any]], store: sqlite3.Connection
) -> None:
    write = next(item for item in items if "expected_state" in item)
    refusal = next(item for item in items if item.get("expected_success") is False)
    missing_card = {"table": "cards", "key": {"id": 10_000}, "values": {"category_id": 1}}
    bad = [
        {**write, "expected_state": [missing_card]},
        {**write, "expected_state": [{"table": "schema_version", "new": True, "values": {}}]},
        {**refusal, "expected_error_code": "loop_detected"},
        {**refusal, "store_unchanged": None, "expected_state": write["expected_state"]},
        {**write, "expected_trajectory": [{"tool": "list_due_cards", "input": {"user_id": 2}}]},
        {**write, "tags": ["agent:nobody", "user:zoe"]},
    ]
    assert all(_problems(store, item) for item in bad)


def test_the_generator_refuses_data_that_does_not_fit(
    script: ModuleType, demo_master: DemoSummary
) -> None:
    facts = script.Facts(Path(demo_master.path))
    try:
        with pytest.raises(ValueError, match="expected one"):
            facts.card_by_front("What is the capital of Atlantis?")
        with pytest.raises(ValueError, match="refusal needs it absent"):
            facts.no_card(1)
        with pytest.raises(ValueError, match="needs it refused"):
            facts.refused("get_card", card_id=1)
        facts.refused("get_card", card_id=facts.no_card(10_000))
    finally:
        facts.close()
