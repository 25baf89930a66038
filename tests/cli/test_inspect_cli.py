"""noema-graph threads / history / inspect on a real checkpoint file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from noema_graph import sqlite_checkpointer
from noema_graph.cli.app import app
from tests.storage.test_inspect import _run

runner = CliRunner()


def _db(tmp_path: Path, scripted: Any) -> Path:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        _run(saver, scripted, "t1")
    return db


def test_threads_history_inspect_as_json(tmp_path: Path, scripted: Any) -> None:
    db = _db(tmp_path, scripted)
    done = runner.invoke(app, ["threads", "--db", str(db), "--json"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.output)
    assert (row["thread_id"], row["status"]) == ("t1", "done")
    done = runner.invoke(app, ["history", "t1", "--db", str(db), "--json"])
    rows = json.loads(done.output)
    assert rows[-1]["node"] == "finalize"
    plan_id = next(r["checkpoint_id"] for r in rows if r["node"] == "plan")
    done = runner.invoke(app, ["inspect", "t1", "--db", str(db), "-c", plan_id, "--json"])
    state = json.loads(done.output)
    assert state["__checkpoint__"]["checkpoint_id"] == plan_id
    assert state["plan"]["steps"][0]["description"] == "count twice"


def test_tables_show_the_thread(tmp_path: Path, scripted: Any) -> None:
    db = _db(tmp_path, scripted)
    for args in (["threads"], ["history", "t1"], ["inspect", "t1"]):
        done = runner.invoke(app, [*args, "--db", str(db)], env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
    assert "counted twice" in done.output and "count twice" in done.output


def test_unknown_thread_or_file_exits_2_naming_the_fix(tmp_path: Path, scripted: Any) -> None:
    db = _db(tmp_path, scripted)
    for args in (["history", "nope"], ["inspect", "nope"]):
        done = runner.invoke(app, [*args, "--db", str(db)], env={"COLUMNS": "300"})
        assert done.exit_code == 2
        assert "no thread 'nope'" in done.output and "noema-graph threads" in done.output
    done = runner.invoke(app, ["threads", "--db", str(tmp_path / "missing.sqlite")])
    assert done.exit_code == 2 and "pass --db" in done.output
