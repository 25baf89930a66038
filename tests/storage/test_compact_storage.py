"""Checkpoint storage: tool results stored once, delta histories from the cache, no snapshots."""

from __future__ import annotations

import random
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # pyright: ignore[reportPrivateUsage]
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import ValidationError

from noema_graph import build_agent_graph, prune, sqlite_checkpointer
from noema_graph.persistence import (
    DELTA_CHANNELS,
    async_sqlite_checkpointer,
    make_compact,
    serializer,
)
from noema_graph.state.models import ReasoningStep, ToolAction
from noema_graph.storage.serde import COMPRESS_MIN, COMPRESSED, inflate
from noema_graph.storage.sqlite.damage import DamagedFileError
from tests.helpers import cfg, run_marks

RESULT = "marked 7 " + "x" * 500


def _step(output: Any = RESULT) -> ReasoningStep:
    return ReasoningStep(
        kind="tool",
        action=ToolAction(tool="mark", input={"n": 7}, output=output),
        observation=RESULT,
        call_id="c7",
    )


def test_a_step_stores_its_result_once_and_reads_back_equal() -> None:
    serde, step = serializer(), _step()
    kind, blob = serde.dumps_typed([step])
    assert blob.count(RESULT.encode()) == 1
    assert serde.loads_typed((kind, blob)) == [step]
    other = _step(output={"rows": [1, 2]})  # a result that is not the observation: both kept
    assert serde.loads_typed(serde.dumps_typed([other])) == [other]
    # LangGraph's own serializer revives the step too (the model's validator restores it)
    assert JsonPlusSerializer().loads_typed((kind, blob)) == [step]


def test_the_output_contract_and_a_pruned_checkpoint_read_back_equal(
    tmp_path: Path, scripted: Any
) -> None:
    db = tmp_path / "o.sqlite"
    make_compact(db)
    state = run_marks(db, 3, scripted)
    serde = serializer(compact=True)
    kind, blob = serde.dumps_typed(state["output"])
    assert serde.loads_typed((kind, blob)) == state["output"]
    prune(db, keep_last=1)  # the kept checkpoint holds messages, trace and output together
    conn = sqlite3.connect(db)
    kind, blob = conn.execute("SELECT type, checkpoint FROM checkpoints").fetchone()
    conn.close()
    assert kind == COMPRESSED  # a compact file's checkpointer compresses large values
    assert inflate(blob).count(b"marked 1") == 1  # in the ToolMessage only
    values = serde.loads_typed((kind, blob))["channel_values"]
    assert values["messages"].value == state["messages"]
    assert values["trace"].value == state["trace"]
    assert values["output"].value == state["output"]  # a delta channel: a snapshot


def test_a_linked_step_read_without_the_project_serializer_fails_loudly() -> None:
    serde, step = serializer(compact=True), _step()
    messages = [AIMessage("", id="a"), ToolMessage(RESULT, tool_call_id="c7", id="t")]
    checkpoint = {
        "channel_values": {"messages": _DeltaSnapshot(messages), "trace": _DeltaSnapshot([step])}
    }
    kind, blob = serde.dumps_typed(checkpoint)
    assert blob.count(RESULT.encode()) == 1
    assert serde.loads_typed((kind, blob))["channel_values"]["trace"].value == [step]
    raw = JsonPlusSerializer().loads_typed((kind, blob))["channel_values"]["trace"].value
    with pytest.raises(ValidationError, match="refers to its ToolMessage"):
        DELTA_CHANNELS["trace"].reducer([], [raw])


def test_cached_delta_history_matches_langgraphs(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "h.sqlite"
    run_marks(db, 4, scripted)
    run_marks(db, 2, scripted)  # a second run on the thread
    run_marks(db, 1, scripted, thread="other")
    prune(db, keep_last=12)  # the oldest kept checkpoint holds a snapshot (a seed)
    channels = list(DELTA_CHANNELS)
    with sqlite_checkpointer(db) as saver:
        stock = SqliteSaver(saver.conn, serde=saver.serde)
        listed = list(saver.list({"configurable": {"thread_id": "s"}}))
        assert len(listed) == 12
        for item in listed:
            conf = item.config["configurable"]
            ours = saver.delta_history.history(  # the cache itself, not a fallback
                saver.conn,
                thread_id="s",
                checkpoint_ns="",
                checkpoint_id=conf["checkpoint_id"],
                channels=channels,
            )
            assert ours is not None
            assert ours == saver.get_delta_channel_history(config=item.config, channels=channels)
            theirs = stock.get_delta_channel_history(config=item.config, channels=channels)
            assert ours == saver.resolve_history(item.config, theirs)
            assert ours["messages"] == theirs["messages"]


def test_trace_writes_of_a_compact_file_decode_on_their_own(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "w.sqlite"
    make_compact(db)
    state = run_marks(db, 3, scripted)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT type, value FROM writes WHERE channel='trace'").fetchall()
    conn.close()
    blobs = [inflate(v) if k == COMPRESSED else v for k, v in rows]
    # each value decodes alone (LangGraph's saver reads it with noema's serializer)
    assert blobs and not any(b"observation_from" in blob for blob in blobs)
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(cfg(), model=scripted(), tools=[], checkpointer=saver)
        config: Any = {"configurable": {"thread_id": "s"}}
        assert graph.get_state(config).values["trace"] == state["trace"]
        assert all(s.values.get("trace") is not None for s in graph.get_state_history(config))


def test_no_snapshot_is_written_by_a_longrun_marks(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "n.sqlite"
    run_marks(db, 60, scripted)  # > 100 updates of messages and trace: snapshots used to start
    serde = serializer()
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT type, checkpoint FROM checkpoints ORDER BY checkpoint_id")
    stored = [serde.loads_typed((kind, blob))["channel_values"] for kind, blob in rows]
    conn.close()
    assert len(stored) > 100
    # plan resets the trace with an Overwrite (stored as the new value) at the start of a run
    assert not any("messages" in values or "trace" in values for values in stored[3:])


def test_large_values_are_stored_compressed_and_small_ones_plain() -> None:
    packing, plain = serializer(compress=True), serializer()
    big = [_step(), "y" * COMPRESS_MIN]
    kind, blob = packing.dumps_typed(big)
    assert kind == COMPRESSED and len(blob) < COMPRESS_MIN
    assert plain.loads_typed((kind, blob)) == big  # every noema serializer reads it
    assert packing.dumps_typed(["small"])[0] == "msgpack"
    assert plain.dumps_typed(big)[0] == "msgpack"  # the default stores values as given
    noise = [random.Random(7).randbytes(4 * COMPRESS_MIN)]  # zlib cannot save a tenth of it
    assert packing.dumps_typed(noise)[0] == "msgpack"  # stored as given


def test_a_compressed_value_that_is_cut_short_or_not_zlib_is_an_error() -> None:
    kind, blob = serializer(compress=True).dumps_typed(["y" * 4 * COMPRESS_MIN])
    with pytest.raises(ValueError, match="cut short"):
        serializer().loads_typed((kind, blob[: len(blob) // 2]))
    with pytest.raises(zlib.error):
        serializer().loads_typed((kind, b"not zlib at all"))


def test_a_damaged_compressed_row_names_the_file(tmp_path: Path, scripted: Any) -> None:
    db = tmp_path / "z.sqlite"
    make_compact(db)
    run_marks(db, 2, scripted)
    conn = sqlite3.connect(db)
    with conn:
        changed = conn.execute(
            "UPDATE checkpoints SET checkpoint = substr(checkpoint, 1, 40) WHERE type = ?",
            (COMPRESSED,),
        ).rowcount
    conn.close()
    assert changed > 0
    with sqlite_checkpointer(db) as saver, pytest.raises(DamagedFileError, match=str(db)):
        for _ in saver.list({"configurable": {"thread_id": "s"}}):
            pass


async def test_new_files_keep_writes_without_rowid_and_the_output_once(
    tmp_path: Path, scripted: Any
) -> None:
    db, other = tmp_path / "w.sqlite", tmp_path / "a.sqlite"
    state = run_marks(db, 2, scripted)
    async with async_sqlite_checkpointer(other) as saver:
        await saver.setup()
    for path in (db, other):
        conn = sqlite3.connect(path)
        (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'writes'").fetchone()
        conn.close()
        assert sql.rstrip().endswith("WITHOUT ROWID")
    conn = sqlite3.connect(db, check_same_thread=False)
    outputs = conn.execute("SELECT count(*) FROM writes WHERE channel = 'output'").fetchone()
    stock = SqliteSaver(conn, serde=serializer())  # LangGraph's saver reads the table as is
    newest = stock.get_tuple({"configurable": {"thread_id": "s"}})
    assert newest is not None and "output" not in newest.checkpoint["channel_values"]
    assert outputs == (2,)  # plan's reset and finalize's contract, nothing in the checkpoints
    assert (
        len(list(stock.list(None)))
        == conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    )
    conn.close()
    with sqlite_checkpointer(db) as saver:
        graph = build_agent_graph(cfg(), model=scripted(), tools=[], checkpointer=saver)
        again = graph.get_state({"configurable": {"thread_id": "s"}}).values
    assert again["output"] == state["output"] and state["output"]["success"]
