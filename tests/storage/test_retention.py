"""prune(): keep_last and older_than over checkpoints, writes, event log and tool ledger."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from noema_graph import build_agent_graph, prune, sqlite_checkpointer, sqlite_store
from noema_graph.effects import drive
from noema_graph.errors import ConfigurationError
from noema_graph.storage.ledger import LEDGER_TABLE, claim
from noema_graph.storage.sqlite.eventlog import read_events
from noema_graph.storage.sqlite.retention import checkpoint_time, parse_age
from tests.helpers import cfg, run_marks


def _rows(db: Path, sql: str, *args: Any) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


def _ledger(db: Path, thread: str, *calls: str) -> None:
    with sqlite_store(db) as store:
        for call_id in calls:
            assert drive(claim(store, thread, {"id": call_id, "name": "t"})) is None


def _ledger_keys(db: Path, thread: str) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(f"SELECT call_id FROM {LEDGER_TABLE} WHERE thread_id=?", (thread,))
        return {r[0] for r in rows}
    finally:
        conn.close()


def _states(db: Path, thread: str, scripted: Any) -> dict[str, dict[str, Any]]:
    """Return every checkpoint's full state values of ``thread``, by checkpoint id."""
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(cfg(), model=scripted(), tools=[], checkpointer=saver)
        history = graph.get_state_history({"configurable": {"thread_id": thread}})
        return {s.config["configurable"]["checkpoint_id"]: dict(s.values) for s in history}


def test_kept_checkpoints_load_as_before_and_the_thread_resumes(
    tmp_path: Path, scripted: Any
) -> None:
    db = tmp_path / "r.sqlite"
    run_marks(db, 5, scripted, "s")
    before = _states(db, "s", scripted)
    removed = prune(db, keep_last=3)
    after = _states(db, "s", scripted)
    assert removed == len(before) - 3
    assert set(after) <= set(before) and len(after) == 3
    for checkpoint_id, values in after.items():  # messages and trace rebuilt as before
        assert values["messages"] == before[checkpoint_id]["messages"]
        assert values["trace"] == before[checkpoint_id]["trace"]
        assert values.get("output") == before[checkpoint_id].get("output")
    state = run_marks(db, 2, scripted, "s")  # a new run on the pruned thread
    assert state["output"]["success"] is True
    assert state["messages"][: len(after[max(after)]["messages"])] == after[max(after)]["messages"]


def test_older_than_drops_whole_threads_with_events_and_ledger(
    tmp_path: Path, scripted: Any
) -> None:
    db = tmp_path / "o.sqlite"
    run_marks(db, 2, scripted, "old")
    _ledger(db, "old", "old-c0", "old-c1")
    run_marks(db, 2, scripted, "new")
    _ledger(db, "new", "new-c0")
    conn = sqlite3.connect(db)
    newest_old = conn.execute(
        "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id='old'"
    ).fetchone()[0]
    conn.close()
    age = datetime.now(UTC) - checkpoint_time(newest_old) - timedelta(microseconds=1)
    prune(db, older_than=age)  # everything of "old" is older; "new" was written after it
    for table in ("checkpoints", "writes", "noema_events"):
        assert _rows(db, f"SELECT count(*) FROM {table} WHERE thread_id='old'") == 0, table
        assert _rows(db, f"SELECT count(*) FROM {table} WHERE thread_id='new'") > 0, table
    assert _ledger_keys(db, "old") == set()
    assert _ledger_keys(db, "new") == {"new-c0"}
    assert run_marks(db, 1, scripted, "new")["output"]["success"] is True


def test_keep_last_drops_ledger_entries_of_calls_answered_before_the_kept_checkpoint(
    tmp_path: Path, scripted: Any
) -> None:
    db = tmp_path / "l.sqlite"
    run_marks(db, 3, scripted, "s")
    _ledger(db, "s", "s-c0", "s-c1", "s-c2", "unknown")
    prune(db, keep_last=1)
    # every call was answered before the last checkpoint; an entry of no known call stays
    assert _ledger_keys(db, "s") == {"unknown"}
    events = read_events(db, thread_id="s")
    assert {e.type for e in events} >= {"agent.completed"}


def test_a_failing_prune_changes_nothing(
    tmp_path: Path, scripted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from noema_graph.storage.sqlite import retention

    db = tmp_path / "a.sqlite"
    run_marks(db, 3, scripted, "s")
    counts = [_rows(db, f"SELECT count(*) FROM {t}") for t in ("checkpoints", "writes")]

    def broken(*args: Any, **kwargs: Any) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(retention, "drop_ledger", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        prune(db, keep_last=1)
    assert [_rows(db, f"SELECT count(*) FROM {t}") for t in ("checkpoints", "writes")] == counts


def test_arguments_are_checked() -> None:
    assert parse_age("7d") == timedelta(days=7)
    assert parse_age("90") == timedelta(seconds=90)
    assert parse_age("1.5h") == timedelta(minutes=90)
    with pytest.raises(ConfigurationError, match="older_than"):
        parse_age("soon")
    with pytest.raises(ConfigurationError, match="keep_last nor older_than"):
        prune("unused.sqlite")
    with pytest.raises(ConfigurationError, match="older_than"):
        prune("unused.sqlite", older_than=-1)


def test_the_cli_prunes_by_age_and_count(tmp_path: Path, scripted: Any) -> None:
    from typer.testing import CliRunner

    from noema_graph.cli.app import app

    db = tmp_path / "c.sqlite"
    run_marks(db, 2, scripted, "s")
    total = _rows(db, "SELECT count(*) FROM checkpoints")

    def invoke(*args: str) -> Any:
        return CliRunner().invoke(app, ["prune", "--db", str(db), *args], env={"COLUMNS": "300"})

    kept = invoke("--older-than", "7d")  # nothing is a week old
    assert kept.exit_code == 0 and "removed 0 checkpoints" in kept.output
    pruned = invoke("--keep-last", "2")
    assert pruned.exit_code == 0 and f"removed {total - 2} checkpoints" in pruned.output
    bad = invoke("--older-than", "soon")
    assert bad.exit_code == 2 and "is not an age" in bad.output
    assert _rows(db, "SELECT count(*) FROM checkpoints") == 2
