"""``noema-graph changes`` and ``undo``, ``run --dry-run``: sessions and bad input (exit codes)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from noema_graph.noema.demo import DemoSummary, write_demo_data
from noema_graph.noema.journal_schema import JOURNAL_TABLE, SETS_TABLE
from tests.scripted import call, plan_reply, structured, text, tools_reply


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    return write_demo_data(tmp_path_factory.mktemp("sample") / "learn.db")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sample: DemoSummary) -> Any:
    from noema_graph.cli import app as cli_module

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOEMA_LEARNING_DB", raising=False)
    monkeypatch.delenv("NOEMA_DATABASE_URL", raising=False)
    shutil.copyfile(sample.path, tmp_path / "learn.db")
    models: list[Any] = []
    options = cli_module.CliOptions(model_factory=lambda spec: models.pop(0))

    def invoke(args: list[str]) -> Any:
        return CliRunner().invoke(cli_module.app, args, obj=options)

    return invoke, models


def _category(card: int) -> int:
    with sqlite3.connect("learn.db") as conn:
        return int(
            conn.execute("SELECT category_id FROM cards WHERE id = ?", (card,)).fetchone()[0]
        )


def _request(card: int, target: int) -> str:
    """Return a request that names the card and the category it asks the card moved into."""
    with sqlite3.connect("learn.db") as conn:
        name = conn.execute("SELECT name FROM categories WHERE id = ?", (target,)).fetchone()[0]
    return f"Move card {card} into the {name} category."


def _move(scripted: Any, card: int, target: int) -> Any:
    return scripted(
        plan_reply("Move the card"),
        tools_reply(call("list_categories", {})),
        tools_reply(call("move_card", {"card_id": card, "category_id": target}, "mv")),
        text("moved"),
        structured(
            "TaxonomyReport", moves=[{"card_id": card, "category_id": target}], suggestions=[],
            summary="Moved.",
        ),
    )  # fmt: skip


def _run(
    invoke: Any, models: list[Any], model: Any, thread: str, *extra: str, ask: str | None = None
) -> Any:
    models.append(model)
    args = ["run", "taxonomy_curator", ask or _request(5, 7), "--data", "learn.db"]
    return invoke([*args, "--thread", thread, "--yes", "--json", *extra])


def test_changes_then_undo_then_undo_the_undo(cli: Any, scripted: Any) -> None:
    invoke, models = cli
    before = _category(5)
    result = _run(invoke, models, _move(scripted, 5, 7), "th1")
    assert result.exit_code == 0, result.output
    meta = json.loads(result.stdout)["metadata"]["changes"]
    assert meta == {"count": 1, "tables": ["cards"], "dry_run": False, "undone": 0}
    shown = invoke(["changes", "th1"])
    assert shown.exit_code == 0, shown.output
    assert "card 5: category Capitals -> Geography" in shown.output
    as_json = json.loads(invoke(["changes", "th1", "--json"]).stdout)
    assert [(c["table"], c["key"], c["call_id"]) for c in as_json] == [("cards", {"id": 5}, "mv")]
    undone = invoke(["undo", "th1"])
    assert undone.exit_code == 0 and "undid 1 row change" in undone.output
    assert _category(5) == before
    again = undone.output.split("take it back with: noema-graph ")[-1].split()
    assert again[0] == "undo" and again[2:] == ["--data", "learn.db"]
    assert invoke(again).exit_code == 0
    assert _category(5) == 7
    inspected = invoke(["inspect", "th1", "--json"])
    assert inspected.exit_code == 0, inspected.output
    assert [c["key"] for c in json.loads(inspected.stdout)["changes"]] == [{"id": 5}] * 2
    text_view = invoke(["inspect", "th1"])
    assert "card 5: category Capitals -> Geography" in text_view.output


def test_a_conflict_names_the_row_and_exits_1_writing_nothing(cli: Any, scripted: Any) -> None:
    invoke, models = cli
    assert _run(invoke, models, _move(scripted, 5, 7), "th1").exit_code == 0
    assert _run(invoke, models, _move(scripted, 5, 3), "th2", ask=_request(5, 3)).exit_code == 0
    result = invoke(["undo", "th1"])
    assert result.exit_code == 1
    assert "card 5 changed since (category_id)" in result.output
    assert _category(5) == 3
    assert invoke(["undo", "th2"]).exit_code == 0
    assert invoke(["undo", "th1"]).exit_code == 0


def test_a_dry_run_writes_nothing_and_says_would(cli: Any, scripted: Any) -> None:
    invoke, models = cli
    before = _category(5)
    models.append(_move(scripted, 5, 7))
    args = ["run", "taxonomy_curator", _request(5, 7), "--data", "learn.db"]
    result = invoke([*args, "--thread", "dry", "--yes", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dry run: nothing was written; this run would:" in result.output
    assert "card 5: would change category Capitals -> Geography" in result.output
    assert _category(5) == before
    shown = invoke(["changes", "dry"])
    assert "dry run" in shown.output and "would change" in shown.output
    nothing = invoke(["undo", "dry"])
    assert nothing.exit_code == 2 and "no change in effect" in nothing.output


def _one_line_error(result: Any, code: int, *words: str) -> None:
    assert result.exit_code == code, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for word in words:
        assert word in lines[0]


def test_bad_input_is_one_line_and_exit_2(cli: Any, scripted: Any, tmp_path: Path) -> None:
    invoke, models = cli
    _one_line_error(invoke(["changes", "nosuch"]), 2, "unknown thread 'nosuch'")
    _one_line_error(invoke(["undo", "nosuch", "--data", "learn.db"]), 2, "unknown thread")
    reads = scripted(
        plan_reply("List"), tools_reply(call("list_categories", {})), text("listed"),
        structured("TaxonomyReport", moves=[], suggestions=[], summary="Nothing to move."),
    )  # fmt: skip
    read = _run(invoke, models, reads, "reader", ask="Show me every category.")
    assert read.exit_code == 0, read.output
    _one_line_error(invoke(["changes", "reader"]), 2, "made no changes")
    _one_line_error(invoke(["undo", "reader"]), 2, "made no changes")
    assert _run(invoke, models, _move(scripted, 5, 7), "th1").exit_code == 0
    shutil.copyfile("learn.db", "other.db")
    with sqlite3.connect("other.db") as conn:
        conn.execute(f"DELETE FROM {JOURNAL_TABLE}")
        conn.execute(f"DELETE FROM {SETS_TABLE}")
    _one_line_error(
        invoke(["changes", "th1", "--data", "other.db"]), 2, "another learning store", "learn.db"
    )
    with sqlite3.connect("learn.db") as conn:
        conn.execute(f"UPDATE {JOURNAL_TABLE} SET table_name = 'card_notes'")
        snapshot = conn.execute("SELECT * FROM cards ORDER BY id").fetchall()
    _one_line_error(invoke(["undo", "th1"]), 2, "card_notes", "no longer has")
    with sqlite3.connect("learn.db") as conn:
        assert conn.execute("SELECT * FROM cards ORDER BY id").fetchall() == snapshot


def test_changes_and_undo_on_postgres(cli: Any, scripted: Any, pg_url: str) -> None:
    invoke, models = cli
    flags = ["--database-url", pg_url]

    def run(thread: str, target: int) -> None:
        models.append(_move(scripted, 5, target))
        args = ["run", "taxonomy_curator", _request(5, target), *flags, "--thread", thread]
        result = invoke([*args, "--yes", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["metadata"]["changes"]["count"] == 1

    run("pg1", 7)
    shown = invoke(["changes", "pg1", *flags])
    assert shown.exit_code == 0, shown.output
    assert "card 5: category Capitals -> Geography" in shown.output
    run("pg2", 3)
    conflict = invoke(["undo", "pg1", *flags])
    assert conflict.exit_code == 1 and "card 5 changed since (category_id)" in conflict.output
    assert invoke(["undo", "pg2", *flags]).exit_code == 0
    assert invoke(["undo", "pg1", *flags]).exit_code == 0
    found = json.loads(invoke(["changes", "pg1", *flags, "--json"]).stdout)
    assert [c["after"]["category_id"] for c in found] == [7, 8]  # the move, then its undo
    _one_line_error(invoke(["changes", "nosuch", *flags]), 2, "unknown thread 'nosuch'")
