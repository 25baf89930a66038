"""``threads``, ``history``, ``inspect``, ``prune`` and ``doctor`` on PostgreSQL, as on SQLite.

The same three scripted runs (one that succeeds, one that fails on its iteration limit, one
paused for an approval) go through ``noema-graph run`` once into a SQLite file and once into
a real PostgreSQL database; then the inspection commands list and show them from each, and
the rows are compared: the same columns and values, times and ids aside. The SQLite saver
writes a run summary into each checkpoint's metadata; PostgreSQL's does not, so this also
checks that both ways of reading a thread agree, a failed run's message included.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner, Result

from noema_graph.cli import app as cli
from noema_graph.cli import runs as cli_runs
from tests.cli.launch import SCRIPTS, slow
from tests.scripted import ScriptedChatModel

BUILD = cli_runs.build_agent_graph
RUNS = {  # thread: (script, extra run arguments, exit code)
    "ok": ("slow-answer", [], 0),
    "failed": ("slow", ["--max-iterations", "1"], 1),
    "paused": ("slow", ["--confirm", "slow"], 3),
}
TIMES_AND_IDS = {"created", "updated", "time", "timestamp", "checkpoint_id", "parent_id", "step_id"}


def _invoke(*args: str, options: cli.CliOptions | None = None) -> Result:
    return CliRunner().invoke(cli.app, list(args), env={"COLUMNS": "300"}, obj=options)


def _run_all(monkeypatch: pytest.MonkeyPatch, where: list[str]) -> None:
    """Run the three scripted runs through ``noema-graph run`` into ``where``."""
    monkeypatch.setattr(cli_runs, "build_agent_graph", lambda c, **kw: BUILD(c, tools=[slow], **kw))
    for thread, (script, extra, code) in RUNS.items():
        replies = SCRIPTS[script]()
        options = cli.CliOptions(model_factory=lambda spec, r=replies: ScriptedChatModel(script=r))
        done = _invoke("run", *where, "--thread", thread, *extra, "--quiet", "go", options=options)
        assert done.exit_code == code, (thread, done.output)


def _listing(where: list[str]) -> dict[str, Any]:
    """Return what the inspection commands print as JSON, times and ids left out."""
    listed: dict[str, Any] = {}
    for args in (["threads"], *(["history", t] for t in RUNS), *(["inspect", t] for t in RUNS)):
        done = _invoke(*args, *where, "--json")
        assert done.exit_code == 0, (args, done.output)
        listed[" ".join(args)] = _without_times(json.loads(done.output))
    return listed


def _without_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_times(v)
            for k, v in value.items()
            if k not in TIMES_AND_IDS and not k.startswith("__")  # checkpoint facts: ids
        }
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def _inspected(listed: dict[str, Any], thread: str) -> dict[str, Any]:
    """Return what ``inspect`` shows of ``thread`` that two runs share (no durations, ids)."""
    state = listed[f"inspect {thread}"]
    output = state.get("output") or {}
    return {
        "plan": state.get("plan"),
        "iteration": state.get("iteration"),
        "usage": state.get("usage"),
        "messages": [(m["type"], m["content"]) for m in state.get("messages", [])],
        "trace": [
            (step["kind"], step["status"], step.get("observation"), step.get("action"))
            for step in state.get("trace", [])
        ],
        "output": {key: output.get(key) for key in ("success", "outcome", "result", "error")},
    }


def test_the_same_runs_list_and_inspect_identically_on_sqlite_and_postgres(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOEMA_DATABASE_URL", raising=False)
    on_file = ["--db", str(tmp_path / "runs.sqlite")]
    on_server = ["--database-url", pg_url]
    _run_all(monkeypatch, on_file)
    _run_all(monkeypatch, on_server)
    from_file, from_server = _listing(on_file), _listing(on_server)

    rows = {row["thread_id"]: row for row in from_server["threads"]}
    assert {t: r["status"] for t, r in rows.items()} == {
        "ok": "done",
        "failed": "failed",
        "paused": "paused",
    }
    code, _, message = str(rows["failed"]["last_error"]).partition(": ")
    assert code == "max_iterations" and message, rows["failed"]  # the message, not just the code
    assert from_server["threads"] == from_file["threads"]
    for thread in RUNS:
        assert from_server[f"history {thread}"] == from_file[f"history {thread}"], thread
    for thread in RUNS:
        assert _inspected(from_server, thread) == _inspected(from_file, thread), thread
    assert _inspected(from_server, "failed")["output"]["error"]["code"] == "max_iterations"

    # the tables print the same rows too (NOEMA_DATABASE_URL selects the server)
    monkeypatch.setenv("NOEMA_DATABASE_URL", pg_url)
    table = _invoke("threads")
    assert table.exit_code == 0 and "max_iterations: " in table.output, table.output


def _count(url: str, sql: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql).fetchone()  # type: ignore[arg-type]  # test constants
        assert row is not None
        return int(row[0])


def test_prune_and_doctor_on_postgres(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    where = ["--database-url", pg_url]
    _run_all(monkeypatch, where)

    checked = _invoke("doctor", *where)
    assert checked.exit_code == 0, checked.output
    assert "healthy" in checked.output.splitlines()[0] and "3 threads" in checked.output
    assert "pg_amcheck" in checked.output
    assert "--repair works on SQLite files only" in checked.output
    report = json.loads(_invoke("doctor", *where, "--json").output)["report"]
    assert report["healthy"] and report["path"] == pg_url and report["counts"]["threads"] == 3
    refused = _invoke("doctor", *where, "--repair")
    assert refused.exit_code == 2 and "SQLite files only" in refused.output

    kept = _invoke("prune", *where)  # keep-last 1: every thread keeps its newest checkpoint
    assert kept.exit_code == 0, kept.output
    assert "removed 0 checkpoints (0 threads)" in kept.output and "kept " in kept.output
    assert _count(pg_url, "SELECT count(DISTINCT thread_id) FROM checkpoints") == 3

    assert _count(pg_url, "SELECT count(*) FROM noema_events") > 0
    gone = _invoke("prune", *where, "--older-than", "0s")
    assert gone.exit_code == 0 and "(3 threads)" in gone.output, gone.output
    for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs", "noema_events"):
        assert _count(pg_url, f"SELECT count(*) FROM {table}") == 0, table
    assert _count(pg_url, "SELECT count(*) FROM store WHERE prefix LIKE 'noema.tool_ledger.%'") == 0
    listed = _invoke("threads", *where)
    assert listed.exit_code == 0 and "no threads in postgresql://" in listed.output


def test_an_empty_database_is_named_with_its_fix(pg_url: str) -> None:
    done = _invoke("threads", "--database-url", pg_url)
    assert done.exit_code == 2 and "no checkpoint tables" in done.output, done.output
    assert "noema-graph db upgrade" in done.output
    checked = _invoke("doctor", "--database-url", pg_url)
    assert checked.exit_code == 1 and "NOT A CHECKPOINT FILE" in checked.output, checked.output


@pytest.mark.parametrize(
    "command",
    [
        ["threads"],
        ["history", "t1"],
        ["inspect", "t1"],
        ["prune"],
        ["doctor"],
        ["events", "t1"],
        ["stats"],
        ["db", "upgrade"],
    ],
)
def test_a_database_out_of_reach_is_one_line_and_exit_2(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    secret = "postgresql://u:hunter2@127.0.0.1:1/db"
    done = _invoke(*command, "--database-url", secret)
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert done.exit_code == 2, done.output
    assert len(lines) == 1 and lines[0].startswith("error: "), done.output
    assert "cannot connect to 'postgresql://u:***@127.0.0.1:1/db'" in lines[0]
    assert "hunter2" not in done.output
    assert not list(tmp_path.iterdir())  # no file was created


def test_doctor_names_orphan_and_undecodable_rows(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    where = ["--database-url", pg_url]
    _run_all(monkeypatch, where)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id,"
            " idx, channel, type, blob) VALUES ('ok', '', 'gone', 'task', 0, 'x', 'msgpack',"
            " '\\x80')"
        )
        conn.execute(
            "UPDATE checkpoint_writes SET blob = '\\xc1c1c1' WHERE thread_id = 'failed'"
            " AND channel = 'output' AND length(blob) > 1"
        )
    checked = _invoke("doctor", *where)
    assert checked.exit_code == 1, checked.output
    assert "DAMAGED" in checked.output.splitlines()[0]
    assert "thread 'ok': 1 writes belong to no checkpoint" in checked.output
    assert "checkpoint_writes row of thread 'failed'" in checked.output
    assert "cannot be decoded" in checked.output
