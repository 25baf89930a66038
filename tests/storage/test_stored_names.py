"""Checkpoint files written before the storage modules moved keep decoding.

``fixtures/main-2026-11-27.sqlite`` was written by main before the move
(``fixtures/write_main_fixture.py``); its stored values name classes by their module path then,
``noema_graph.compact_serde`` among them. The serializer's allow-list keeps those paths as
aliases for good (:data:`noema_graph.storage.serde.STORED_ALIASES`).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from noema_graph import build_agent_graph, sqlite_checkpointer
from noema_graph.state.models import ReasoningStep, TaskPlan
from noema_graph.storage.serde import STORED_ALIASES
from tests.helpers import add, cfg, lookup
from tests.scripted import ScriptedChatModel
from tests.storage.fixtures.write_main_fixture import FIXTURE, THREAD

ANSWER = "17 + 23 = 40; k is value-of-k"


def _stored_names(path: Path) -> set[bytes]:
    """Return the ``noema_graph`` module paths named in the file's checkpoints and writes."""
    with sqlite3.connect(path) as conn:
        rows = [*conn.execute("SELECT type, checkpoint FROM checkpoints")]
        rows += [*conn.execute("SELECT type, value FROM writes")]
    raw = b"".join(zlib.decompress(b) if t == "msgpack+zlib" else (b or b"") for t, b in rows)
    return set(re.findall(rb"noema_graph[\w.]*", raw))


def _history(path: Path) -> list[Any]:
    with sqlite_checkpointer(path) as saver:
        graph = build_agent_graph(
            cfg(reflection_interval=10_000),
            model=ScriptedChatModel(script=[]),
            tools=[add, lookup],
            checkpointer=saver,
        )
        return list(graph.get_state_history({"configurable": {"thread_id": THREAD}}))


def test_the_fixture_names_the_old_module_path() -> None:
    assert ("noema_graph.compact_serde", "expand_output") in STORED_ALIASES
    assert b"noema_graph.compact_serde" in _stored_names(FIXTURE)


def test_every_checkpoint_of_a_file_written_before_the_move_reads(tmp_path: Path) -> None:
    copy = tmp_path / "old.sqlite"
    shutil.copy(FIXTURE, copy)

    history = _history(copy)

    assert [h.metadata["step"] for h in history] == list(range(8, -2, -1))
    assert [h.next for h in history][:3] == [(), ("finalize",), ("execute_step",)]
    final = history[0].values
    assert final["output"]["result"] == ANSWER
    assert final["output"]["metadata"]["tools_used"] == ["add", "lookup"]
    # stored compact (the action's output left out), expanded by the old-path name
    actions = [s["action"] for s in final["output"]["reasoning"]["steps"] if s["action"]]
    assert [a["output"] for a in actions] == ["40", "value-of-k"]
    assert [m.content for m in final["messages"] if m.type == "tool"] == ["40", "value-of-k"]
    assert isinstance(final["plan"], TaskPlan)
    assert [s.description for s in final["plan"].steps] == ["add the numbers", "look up the key"]
    assert all(isinstance(s, ReasoningStep) for s in final["trace"])
    assert [s.kind for s in final["trace"]] == [
        "plan",
        "tool",
        "thought",
        "tool",
        "thought",
        "final",
    ]
    for earlier in history[1:-1]:  # the last is the input, before the request was added
        assert earlier.values["messages"][0].content == "add 17 and 23, then look up k"
