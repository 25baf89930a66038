"""Checkpoint files LangGraph's own SqliteSaver reads: the stock default, compact, export."""

from __future__ import annotations

import asyncio
import hashlib
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Overwrite
from typer.testing import CliRunner

from noema_graph import build_agent_graph, prune
from noema_graph.cli.app import app
from noema_graph.errors import ConfigurationError
from noema_graph.inspect import checkpoint
from noema_graph.persistence import (
    async_sqlite_checkpointer,
    make_compact,
    serializer,
    sqlite_checkpointer,
)
from noema_graph.storage.serde import COMPRESSED
from noema_graph.storage.sqlite.doctor import diagnose
from noema_graph.storage.sqlite.export import export_stock
from noema_graph.storage.sqlite.format import COMPACT_APPLICATION_ID, application_id, file_format
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply
from tests.storage.stock_reader import history_of

ROOT = Path(__file__).resolve().parents[2]
OLD_FILE = Path(__file__).parent / "fixtures" / "main_compact.sqlite"
"""Written by main at 61a535d (before the stock format): two threads, pruned to 6 each."""
RESULT = "row {n}: " + "lorem ipsum " * 60  # over COMPRESS_MIN: compact files compress it


@tool
def bulk(n: int) -> str:
    """Return a long result for ``n``."""
    return RESULT.format(n=n)


def _script(scripted: Any, n: int, thread: str) -> Any:
    replies = [tools_reply(call("bulk", {"n": i}, f"{thread}-c{i}")) for i in range(n)]
    return scripted(plan_reply("loop"), *replies, text("done"))


def _config(n: int) -> Any:
    return cfg(max_iterations=n + 2, reflection_interval=10_000, loop_threshold=1000)


def _run(db: Path, scripted: Any, *, n: int = 3, thread: str = "s", compact: bool = False) -> None:
    with sqlite_checkpointer(db, compact=compact) as saver:
        graph = build_agent_graph(
            _config(n), model=_script(scripted, n, thread), tools=[bulk], checkpointer=saver
        )
        graph.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}})


async def _arun(db: Path, scripted: Any, *, n: int = 3, thread: str = "a") -> None:
    async with async_sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(
            _config(n), model=_script(scripted, n, thread), tools=[bulk], checkpointer=saver
        )
        await graph.ainvoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}})


def _noema_history(db: Path) -> dict[str, Any]:
    """Every thread's history read through noema's own saver."""
    with sqlite_checkpointer(db) as saver:
        model = ScriptedChatModel(script=[])
        graph = build_agent_graph(cfg(), model=model, tools=[], checkpointer=saver)
        threads = sorted({item.config["configurable"]["thread_id"] for item in saver.list(None)})
        return {thread: history_of(graph, thread) for thread in threads}


def _stock_history(db: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """Every thread's history read by LangGraph's SqliteSaver in a strict-msgpack process."""
    out = tmp_path / f"{db.name}.pickle"
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.storage.stock_reader", str(db), str(out), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return pickle.loads(out.read_bytes())


def _types(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT type FROM checkpoints UNION SELECT type FROM writes")
        return {str(row[0]) for row in rows}
    finally:
        conn.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_default_file_reads_the_same_through_langgraphs_own_saver(
    tmp_path: Path, scripted: Any
) -> None:
    db = tmp_path / "stock.sqlite"
    _run(db, scripted, thread="s")
    asyncio.run(_arun(db, scripted, thread="a"))
    assert _types(db) <= {"msgpack", "null"}  # no compressed value
    with sqlite_checkpointer(db) as saver:
        assert application_id(saver.conn) == 0 and file_format(saver.conn) == "stock"
    ours = _noema_history(db)
    assert set(ours) == {"a", "s"} and all(len(states) > 5 for states in ours.values())
    assert _stock_history(db, tmp_path) == ours
    assert _stock_history(db, tmp_path, "--default-serde") == ours  # the schema's allow-list
    prune(db, keep_last=3)  # the oldest kept checkpoint gets snapshots of the delta channels
    pruned = _noema_history(db)
    assert all(len(states) == 3 for states in pruned.values())
    assert _stock_history(db, tmp_path) == pruned
    assert pruned["s"][0] == ours["s"][0]  # the latest state survives the prune


def test_a_compact_file_is_marked_and_read_by_noema_only(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "compact.sqlite"
    stock = tmp_path / "stock.sqlite"
    _run(db, scripted, compact=True)
    _run(stock, scripted)
    assert COMPRESSED in _types(db)
    assert db.stat().st_size < stock.stat().st_size
    conn = sqlite3.connect(db)
    assert application_id(conn) == COMPACT_APPLICATION_ID
    with pytest.raises(NotImplementedError, match="msgpack\\+zlib"):
        list(SqliteSaver(conn).list(None))  # LangGraph's default serializer
    conn.close()
    ours = _noema_history(db)
    observations = [step.observation for step in ours["s"][0][1]["trace"]]
    assert observations == [s.observation for s in _noema_history(stock)["s"][0][1]["trace"]]
    assert _stock_history(db, tmp_path, "--noema-serde") == ours
    assert diagnose(db).format == "compact" and diagnose(stock).format == "stock"
    assert "compact format" in diagnose(db).lines()[0]
    assert checkpoint(db, "s")["__checkpoint__"]["format"] == "compact"
    assert checkpoint(stock, "s")["__checkpoint__"]["format"] == "stock"


def test_a_file_written_before_the_marker_reads_stays_compact_and_exports(
    tmp_path: Path, scripted: Any
) -> None:
    db, out = tmp_path / "old.sqlite", tmp_path / "old-stock.sqlite"
    shutil.copy(OLD_FILE, db)  # main's format: compressed rows, trace writes linked, no marker
    assert file_format(sqlite3.connect(db)) == "compact"
    before = _noema_history(db)
    assert [len(states) for states in before.values()] == [6, 6]
    assert export_stock(db, out).source_format == "compact"
    assert _stock_history(out, tmp_path) == before
    with sqlite_checkpointer(db) as saver:  # no compact=True: the file's rows decide
        assert saver.compact and application_id(saver.conn) == COMPACT_APPLICATION_ID
    _run(db, scripted, n=1, thread="u")  # a later writer keeps writing compact
    assert _noema_history(db)["s"] == before["s"]
    assert COMPRESSED in _types(db) and file_format(sqlite3.connect(db)) == "compact"


def test_export_stock_converts_a_compact_file_without_touching_it(
    tmp_path: Path, scripted: Any
) -> None:
    source, target = tmp_path / "in.sqlite", tmp_path / "out.sqlite"
    _run(source, scripted, compact=True)
    _run(source, scripted, compact=True, n=2, thread="t")
    prune(source, keep_last=4)  # linked snapshots in the oldest kept checkpoint
    digest, ours = _digest(source), _noema_history(source)
    done = export_stock(source, target)
    assert (done.source_format, done.checkpoints) == ("compact", 8)
    assert _digest(source) == digest
    assert _types(target) <= {"msgpack", "null"}
    assert file_format(sqlite3.connect(target)) == "stock"
    assert _stock_history(target, tmp_path) == ours
    with pytest.raises(ConfigurationError, match=r"OUT: .* already exists.*fix: choose another"):
        export_stock(source, target)
    assert _digest(source) == digest


def test_the_cli_exports_and_marks_compact_files(tmp_path: Path) -> None:
    source, target = tmp_path / "in.sqlite", tmp_path / "out.sqlite"
    runner = CliRunner()
    with sqlite_checkpointer(source):
        pass
    done = runner.invoke(app, ["export", str(source), str(target)])
    assert done.exit_code == 2 and "--stock" in done.output
    done = runner.invoke(app, ["export", "--stock", str(source), str(target)])
    assert done.exit_code == 0, done.output
    assert "(stock): 0 checkpoints" in done.output
    done = runner.invoke(app, ["export", "--stock", str(source), str(target)])
    assert done.exit_code == 2 and "already exists" in done.output
    done = runner.invoke(app, ["doctor", str(target)])
    assert "stock format" in done.output
    make_compact(target)  # what run --compact does first
    assert file_format(sqlite3.connect(target)) == "compact"


def test_export_refuses_what_is_not_a_checkpoint_file(tmp_path: Path) -> None:
    text, other, out = tmp_path / "notes.txt", tmp_path / "other.sqlite", tmp_path / "o.sqlite"
    text.write_text("not a database " * 100)
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ConfigurationError, match=r"IN: .* not a readable SQLite file"):
        export_stock(text, out)
    with pytest.raises(ConfigurationError, match=r"IN: .* holds no checkpoints"):
        export_stock(other, out)
    with pytest.raises(ConfigurationError, match=r"IN: .* is not a file"):
        export_stock(tmp_path / "missing.sqlite", out)
    assert not out.exists()


def test_values_without_trace_steps_are_encoded_byte_for_byte_as_langgraph_does() -> None:
    value = {
        "messages": [AIMessage("a" * 300, id="a"), ToolMessage("t" * 70_000, tool_call_id="c")],
        "at": datetime.now(UTC),
        "tags": {1, 2},
        "reset": Overwrite([1]),
        "short": AIMessage("", id="b"),
    }
    assert serializer().dumps_typed(value) == JsonPlusSerializer().dumps_typed(value)
