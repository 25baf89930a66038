"""The inspection commands pick their database as ``run`` does: --db, --database-url, env.

SQLite here (``sqlite:///`` URLs, the environment variable, the flag errors); the PostgreSQL
side is ``tests/cli/test_inspect_cli_postgres.py``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from noema_graph import sqlite_checkpointer
from noema_graph.cli.app import app
from noema_graph.inspect import acheckpoint, ahistory, athreads, checkpoint, history, threads
from tests.storage.test_inspect import _run


def _invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "300", **(env or {})})


@pytest.fixture
def db(tmp_path: Path, scripted: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOEMA_DATABASE_URL", raising=False)
    path = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(path) as saver:
        _run(saver, scripted, "t1")
    return path


def test_python_reads_a_sqlite_url_as_the_file(db: Path) -> None:
    url = f"sqlite:///{db}"
    assert threads(url) == threads(db) == asyncio.run(athreads(url))
    assert history(url, "t1") == history(db, "t1") == asyncio.run(ahistory(url, "t1"))
    at = checkpoint(db, "t1")["__checkpoint__"]
    assert checkpoint(url, "t1")["__checkpoint__"] == at
    assert asyncio.run(acheckpoint(url, "t1"))["__checkpoint__"] == at


def test_the_url_flag_and_the_environment_select_the_file(db: Path) -> None:
    by_flag = _invoke("threads", "--database-url", f"sqlite:///{db}", "--json")
    by_env = _invoke("threads", "--json", env={"NOEMA_DATABASE_URL": f"sqlite:///{db}"})
    assert by_flag.exit_code == by_env.exit_code == 0, (by_flag.output, by_env.output)
    assert json.loads(by_flag.output) == json.loads(by_env.output)
    assert json.loads(by_flag.output)[0]["thread_id"] == "t1"
    for command in (["history", "t1"], ["inspect", "t1"]):
        done = _invoke(*command, "--json", env={"NOEMA_DATABASE_URL": f"sqlite:///{db}"})
        assert done.exit_code == 0, done.output
    checked = _invoke("doctor", "--database-url", f"sqlite:///{db}")
    assert checked.exit_code == 0 and checked.output.startswith(f"{db}: healthy"), checked.output
    pruned = _invoke("prune", "--database-url", f"sqlite:///{db}")
    assert pruned.exit_code == 0 and "removed" in pruned.output, pruned.output


def test_a_missing_thread_names_the_flag_that_lists_them(db: Path) -> None:
    done = _invoke("history", "nope", "--database-url", f"sqlite:///{db}")
    assert done.exit_code == 2 and f"noema-graph threads --db {db}" in done.output


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["threads", "--db", "a.sqlite", "--database-url", "sqlite:///b"], "exclude each other"),
        (["prune", "--db", "a.sqlite", "--database-url", "sqlite:///b"], "exclude each other"),
        (["doctor", "a.sqlite", "--database-url", "sqlite:///b"], "exclude each other"),
        (["doctor"], "no database to check"),
        (["threads", "--database-url", "mysql://h/db"], "unsupported scheme 'mysql'"),
        (["doctor", "--database-url", "mysql://h/db"], "unsupported scheme 'mysql'"),
        (["threads", "--database-url", "sqlite:///missing.sqlite"], "does not exist"),
    ],
)
def test_bad_database_choices_are_one_line_and_exit_2(
    db: Path, command: list[str], expected: str
) -> None:
    done = _invoke(*command)
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert done.exit_code == 2, done.output
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], lines
    assert "(fix: " in lines[0]
