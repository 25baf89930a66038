"""Damaged checkpoint files: clear errors on the read paths, ``noema-graph doctor [--repair]``.

Every case starts from a real checkpoint file written by real runs (three threads, a
non-idempotent tool, so the Store holds tool-ledger entries), then damages a copy: truncated,
pages overwritten, a garbage blob or metadata in a checkpoint row, a garbage ledger entry, a
foreign SQLite file, a text file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import typer
from langchain_core.tools import BaseTool
from langgraph.checkpoint.sqlite import SqliteSaver
from typer.testing import CliRunner

from noema_graph import build_agent_graph
from noema_graph import inspect as runs
from noema_graph.cli.doctor import register
from noema_graph.persistence import async_sqlite_checkpointer, sqlite_checkpointer, sqlite_store
from noema_graph.storage.ledger import LEDGER_NAMESPACE, LEDGER_TABLE, entries
from noema_graph.storage.sqlite.damage import DamagedFileError
from noema_graph.storage.sqlite.doctor import diagnose
from noema_graph.storage.sqlite.recover import repair
from tests.helpers import add, cfg
from tests.reliability.ledger_load import charge_tool
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

THREADS = ("t0", "t1", "t2")
PAGE = 4096


def _graph(saver: Any, tools: list[BaseTool], *script: Any, store: Any = None) -> Any:
    model = ScriptedChatModel(script=list(script))
    return build_agent_graph(
        cfg(reflection_interval=10), model=model, tools=tools, checkpointer=saver, store=store
    )


def _config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A healthy file: three finished threads, each with a tool call and a ledger entry."""
    folder = tmp_path_factory.mktemp("pristine")
    db = folder / "runs.sqlite"
    tools = [add, charge_tool(folder / "effects.log")]
    with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
        for n, thread in enumerate(THREADS):
            charge = call("charge", {"run": thread, "n": n}, f"{thread}-c")
            graph = _graph(
                saver, tools, plan_reply("add"), tools_reply(call("add", {"a": 1, "b": n})),
                tools_reply(charge), text(f"done {'x' * 2000}"), store=store,
            )  # fmt: skip
            graph.invoke({"messages": [("user", "add " * 400)]}, _config(thread))
    assert not db.with_name(db.name + "-wal").exists()  # everything is in the main file
    return db


@pytest.fixture
def db(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "runs.sqlite"
    shutil.copyfile(pristine, copy)
    return copy


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _edit(db: Path, sql: str, *params: Any) -> list[Any]:
    """Run one statement on ``db`` and close it (the last close folds the WAL into the file)."""
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        return conn.execute(sql, params).fetchall()


def _set_newest(db: Path, thread: str, column: str, value: bytes) -> str:
    newest = _edit(db, "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?", thread)
    checkpoint = str(newest[0][0])
    _edit(
        db,
        f"UPDATE checkpoints SET {column} = ? WHERE thread_id = ? AND checkpoint_id = ?",
        value, thread, checkpoint,
    )  # fmt: skip
    return checkpoint


GARBAGE = b"\xd9\x03\xff\xfe\xfd" + bytes(range(40))  # msgpack: a str of invalid UTF-8


def _truncate(db: Path) -> None:
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size * 6 // 10)


def _overwrite_middle(db: Path) -> None:
    pages = db.stat().st_size // PAGE
    with db.open("r+b") as f:
        for page in range(pages // 2, pages // 2 + 3):
            f.seek(page * PAGE)
            f.write(os.urandom(PAGE))


def _foreign(db: Path) -> None:
    db.unlink()
    _edit(db, "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    _edit(db, "INSERT INTO users (name) VALUES ('ann')")


@pytest.fixture
def cli() -> Any:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:  # pyright: ignore[reportUnusedFunction]  # typer registers it
        """A one-command app, as noema-graph has more."""

    register(app)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["doctor", *map(str, args)])


# --- clear errors on the read paths --------------------------------------------------------


def test_a_text_file_is_named_not_dumped(db: Path) -> None:
    db.write_text("hello, this is not a database\n" * 40)
    with pytest.raises(DamagedFileError, match="is not a SQLite database") as caught:
        runs.threads(db)
    assert str(db) in str(caught.value) and "fix: pass the checkpoint file" in str(caught.value)
    with pytest.raises(DamagedFileError, match="'hello, this is n'"), sqlite_checkpointer(db):
        pass


def test_a_truncated_file_names_the_file_and_the_fix(db: Path) -> None:
    _truncate(db)
    with pytest.raises(DamagedFileError) as caught:
        runs.threads(db)
    message = str(caught.value)
    assert str(db) in message and "malformed" in message
    assert f"noema-graph doctor {db} --repair" in message


def test_a_garbage_blob_names_the_thread_and_checkpoint(db: Path) -> None:
    newest = _set_newest(db, "t1", "checkpoint", GARBAGE)
    with sqlite_checkpointer(db) as saver:
        graph = _graph(saver, [add])
        assert graph.get_state(_config("t0")).values["output"]["success"]  # others still read
        with pytest.raises(DamagedFileError) as caught:
            graph.get_state(_config("t1"))
        with pytest.raises(DamagedFileError):
            graph.invoke(None, _config("t1"))  # resume
    damage = caught.value
    assert (damage.path, damage.thread_id, damage.checkpoint_id) == (db, "t1", newest)
    assert "cannot be decoded" in str(damage) and "doctor" in str(damage)
    with pytest.raises(DamagedFileError, match="'t1'"):
        runs.checkpoint(db, "t1")


async def test_a_garbage_blob_is_named_on_the_async_path(db: Path) -> None:
    _set_newest(db, "t2", "checkpoint", GARBAGE)
    async with async_sqlite_checkpointer(db) as saver:
        graph = _graph(saver, [add])
        assert (await graph.aget_state(_config("t0"))).values["output"]["success"]
        with pytest.raises(DamagedFileError, match="thread 't2'"):
            await graph.aget_state(_config("t2"))
        with pytest.raises(DamagedFileError, match="thread 't2'"):
            [s async for s in graph.aget_state_history(_config("t2"))]


def test_garbage_metadata_is_named_by_the_listing(db: Path) -> None:
    newest = _set_newest(db, "t0", "metadata", b"\xff\xfe{not json")
    with pytest.raises(DamagedFileError) as caught:
        runs.threads(db)
    assert (caught.value.thread_id, caught.value.checkpoint_id) == ("t0", newest)


def test_a_bug_is_not_reported_as_damage(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: SqliteSaver, config: Any) -> None:
        raise ValueError("a bug in the saver, not in the file")

    monkeypatch.setattr(SqliteSaver, "get_tuple", broken)
    with sqlite_checkpointer(db) as saver, pytest.raises(ValueError, match="a bug") as caught:
        saver.get_tuple(_config("t0"))
    assert not isinstance(caught.value, DamagedFileError)


def test_check_on_open_runs_quick_check(db: Path) -> None:
    _overwrite_middle(db)
    with sqlite_checkpointer(db):
        pass  # opening does not read every page
    with (
        pytest.raises(DamagedFileError, match=r"quick_check|malformed"),
        sqlite_checkpointer(db, check=True),
    ):
        pass


# --- noema-graph doctor -------------------------------------------------------------------


def test_doctor_passes_a_healthy_file(db: Path, cli: Any) -> None:
    result = cli(db)
    assert result.exit_code == 0, result.output
    assert f"{db}: healthy (" in result.output and "3 threads" in result.output
    assert cli(db, "--repair").exit_code == 0 and not db.with_suffix(".recovered.sqlite").exists()


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (_truncate, "truncated"),
        (_overwrite_middle, "PRAGMA integrity_check found|SQLite cannot check the file"),
        (lambda p: _set_newest(p, "t1", "checkpoint", GARBAGE), "thread 't1': its newest"),
    ],
    ids=["truncated", "overwritten", "garbage-blob"],
)
def test_doctor_finds_the_damage_and_repairs_into_a_new_file(
    db: Path, cli: Any, damage: Any, expected: str
) -> None:
    damage(db)
    before = _digest(db)
    result = cli(db, "--repair")
    assert result.exit_code == 1, result.output
    assert "DAMAGED" in result.output
    assert any(text in result.output for text in expected.split("|"))  # where the pages fell
    recovered = db.with_name("runs.recovered.sqlite")
    assert f"recovered into {recovered}" in result.output
    assert _digest(db) == before  # the original is untouched
    assert not db.with_name(db.name + "-wal").exists()
    assert not db.with_name(db.name + "-shm").exists()
    assert diagnose(recovered).healthy
    found = runs.threads(recovered)
    assert found and all(row.thread_id in THREADS for row in found)


def test_a_repaired_thread_resumes_from_its_last_good_checkpoint(db: Path) -> None:
    _set_newest(db, "t1", "checkpoint", GARBAGE)
    recovery = repair(db, sqlite_cli="")  # the sqlite3 module alone
    assert recovery.method.startswith("the sqlite3 module")
    assert len(recovery.dropped) == 1 and "'t1'" in recovery.dropped[0]
    statuses = {row.thread_id: row.status for row in runs.threads(recovery.out)}
    assert statuses == {"t0": "done", "t1": "running", "t2": "done"}
    with sqlite_checkpointer(recovery.out) as saver:
        graph = _graph(saver, [add])  # no scripted reply: resuming must not call the model
        assert graph.get_state(_config("t1")).values["messages"]
        final = graph.invoke(None, _config("t1"))  # finalize's writes survived
    assert final["output"]["success"]


def test_without_the_cli_a_table_without_rowid_is_read_from_both_ends(db: Path) -> None:
    (schema,) = _edit(db, "SELECT sql FROM sqlite_master WHERE name = 'writes'")[0]
    assert schema.rstrip().endswith("WITHOUT ROWID")  # how noema creates the table
    total = _edit(db, "SELECT COUNT(*) FROM writes")[0][0]
    _overwrite_middle(db)
    recovery = repair(db, sqlite_cli="")  # the sqlite3 module alone
    assert recovery.method.startswith("the sqlite3 module")
    assert diagnose(recovery.out).healthy
    assert 0 < recovery.rows["writes"] <= total


def test_an_unreadable_ledger_entry_is_kept_as_started(db: Path) -> None:
    """A file from before the ledger's table kept entries as Store items (still read)."""
    _edit(db, f"DROP TABLE {LEDGER_TABLE}")
    with sqlite_store(db) as store:
        store.put((*LEDGER_NAMESPACE, "t2"), "t2-c", {"status": "done", "tool": "charge"})
    _edit(db, "UPDATE store SET value = ? WHERE prefix = ?", "{not json", "noema.tool_ledger.t2")
    assert not diagnose(db).healthy
    recovery = repair(db)
    assert any("kept as 'started'" in line for line in recovery.dropped)
    with sqlite_store(recovery.out) as store:
        assert entries(store, "t2") == {"t2-c": "started"}  # a resume will not repeat it


@pytest.mark.parametrize("kind", ["foreign", "text"])
def test_doctor_says_what_is_not_a_checkpoint_file(db: Path, cli: Any, kind: str) -> None:
    if kind == "foreign":
        _foreign(db)
    else:
        db.write_bytes(b"just some notes\n" * 100)
    result = cli(db, "--repair")
    assert result.exit_code == 1, result.output
    assert "NOT A CHECKPOINT FILE" in result.output and "nothing to repair" in result.output
    assert not db.with_name("runs.recovered.sqlite").exists()


def test_doctor_usage_errors(db: Path, cli: Any, tmp_path: Path) -> None:
    assert cli(tmp_path / "missing.sqlite").exit_code == 2
    assert cli(db, "--out", tmp_path / "x.sqlite").exit_code == 2  # --out without --repair
    _set_newest(db, "t1", "checkpoint", GARBAGE)
    taken = tmp_path / "taken.sqlite"
    taken.write_text("already here")
    assert cli(db, "--repair", "--out", taken).exit_code == 2
    assert taken.read_text() == "already here"


def test_the_cli_names_the_damage_in_one_line(db: Path) -> None:
    """history/inspect of a damaged file: one line with the fix, exit 1, no traceback."""
    from noema_graph.cli.app import app

    runner = CliRunner()
    for column, command in (("metadata", "history"), ("checkpoint", "inspect")):
        bad = _set_newest(db, "t1", column, GARBAGE)
        result = runner.invoke(app, [command, "t1", "--db", str(db)])
        assert result.exit_code == 1, result.output
        assert "Traceback" not in result.output
        assert "noema-graph doctor" in result.output and bad[:8] in result.output
    assert runner.invoke(app, ["doctor", "--help"]).exit_code == 0
