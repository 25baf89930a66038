"""One run per thread: the lease under 16 racing processes, and its rules in one process.

The race (see ``resume_race``): 16 processes approve the same paused run at the same instant,
on one SQLite file. Under ``reject`` exactly one runs the non-idempotent call and every other
one gets ``ThreadBusy``; under ``enqueue`` the others wait and find the run done. The
ledger's own race: 16 processes claim one call straight in the ledger, exactly one wins.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph import build_agent_graph
from noema_graph.errors import ConfigurationError
from noema_graph.persistence import sqlite_checkpointer
from noema_graph.storage.lease import LEASE_TABLE, ThreadBusy
from tests.helpers import cfg
from tests.reliability.resume_race import effects, race
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

WORKERS = 16
ROUNDS = 5


def test_16_processes_approving_one_pause_run_it_once(tmp_path: Path) -> None:
    outcomes = race(str(tmp_path / "runs.sqlite"), tmp_path, workers=WORKERS, rounds=ROUNDS,
                    strategy="reject")  # fmt: skip
    assert outcomes == [["busy"] * (WORKERS - 1) + ["ran"]] * ROUNDS
    assert sorted(effects(tmp_path)) == [str(r) for r in range(ROUNDS)]  # once per round
    with sqlite3.connect(tmp_path / "runs.sqlite") as conn:
        assert conn.execute(f"SELECT count(*) FROM {LEASE_TABLE}").fetchone() == (0,)


def test_with_enqueue_the_others_wait_and_find_the_run_done(tmp_path: Path) -> None:
    outcomes = race(str(tmp_path / "runs.sqlite"), tmp_path, workers=WORKERS, rounds=1,
                    strategy="enqueue")  # fmt: skip
    assert outcomes == [["late"] * (WORKERS - 1) + ["ran"]]
    assert effects(tmp_path) == ["0"]


def test_16_processes_claiming_one_call_one_wins(tmp_path: Path) -> None:
    outcomes = race(str(tmp_path / "runs.sqlite"), tmp_path, workers=WORKERS, rounds=ROUNDS,
                    strategy="claim")  # fmt: skip
    assert outcomes == [["refused"] * (WORKERS - 1) + ["won"]] * ROUNDS


def _lease_row(db: Path, thread: str, info: dict[str, Any], expires_at: float) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            f"INSERT INTO {LEASE_TABLE} VALUES (?, 'other', ?, ?)",
            (thread, json.dumps(info), expires_at),
        )


def _graph(saver: Any, *replies: Any) -> Any:
    return build_agent_graph(
        cfg(), model=ScriptedChatModel(script=list(replies)), checkpointer=saver
    )


REQUEST: Any = {"messages": [("user", "hi")]}
ELSEWHERE = {"pid": 1, "host": "another-host", "start": 1, "since": 1_700_000_000}


def test_a_live_holder_elsewhere_is_named_then_its_expired_lease_is_taken(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        _graph(saver, plan_reply("x"), text("a")).invoke(
            REQUEST, {"configurable": {"thread_id": "t0"}}
        )
        _lease_row(db, "t1", ELSEWHERE, time.time() + 3600)
        with pytest.raises(ThreadBusy, match=r"thread 't1' is busy.*pid 1 on another-host") as busy:
            _graph(saver).invoke(REQUEST, {"configurable": {"thread_id": "t1"}})
        assert busy.value.holder["host"] == "another-host"
        _lease_row(db, "t2", ELSEWHERE, time.time() - 1)  # expired: the holder stopped renewing
        state = _graph(saver, plan_reply("x"), text("b")).invoke(
            REQUEST, {"configurable": {"thread_id": "t2"}}
        )
    assert state["output"]["success"]


def test_the_lease_of_a_dead_process_on_this_host_is_taken_at_once(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    db = tmp_path / "runs.sqlite"
    with sqlite_checkpointer(db) as saver:
        _graph(saver, plan_reply("x"), text("a")).invoke(
            REQUEST, {"configurable": {"thread_id": "t0"}}
        )
        info = {"pid": int(dead.stdout), "host": socket.gethostname(), "start": 1, "since": 1}
        _lease_row(db, "t1", info, time.time() + 3600)
        state = _graph(saver, plan_reply("x"), text("b")).invoke(
            REQUEST, {"configurable": {"thread_id": "t1"}}
        )
    assert state["output"]["success"]


def test_an_unknown_strategy_names_the_accepted_ones() -> None:
    graph = _graph(InMemorySaver())
    with pytest.raises(ConfigurationError, match=r"multitask_strategy.*'reject', 'enqueue'"):
        graph.invoke(REQUEST, {"configurable": {"thread_id": "t", "multitask_strategy": "drop"}})


async def test_astream_holds_the_lease_and_renews_it_until_the_run_ends() -> None:
    """Two async runs of one thread in one process: the second is rejected while the first
    waits in its tool, which returns once the lease was renewed (a short TTL)."""
    saver = InMemorySaver()
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow() -> str:
        """Wait until the test lets go."""
        started.set()
        await release.wait()
        return "done"

    model = ScriptedChatModel(
        script=[plan_reply("x"), tools_reply(call("slow", {}, "s1")), text("ok")]
    )
    graph = build_agent_graph(cfg(), model=model, tools=[slow], checkpointer=saver)
    config: Any = {"configurable": {"thread_id": "a", "lease_ttl_s": 0.3}}
    first = asyncio.create_task(graph.ainvoke(REQUEST, config))
    await started.wait()
    with pytest.raises(ThreadBusy):
        await _graph(saver).ainvoke(REQUEST, config)
    from noema_graph.storage.lease import READ_SQL
    from noema_graph.storage.side_tables import database_of

    database = database_of(saver)
    assert database is not None and database.run is not None
    [(_, _, expires)] = database.run(READ_SQL, ("a",))
    while True:  # wait for the renewal (every ttl/3), a condition on the database
        if database.run(READ_SQL, ("a",))[0][2] != expires:
            break
        await asyncio.sleep(0.01)
    release.set()
    assert (await first)["output"]["success"]
    assert database.run(READ_SQL, ("a",)) == []  # released


def test_the_cli_prints_one_line_and_exits_3_on_a_busy_thread(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from noema_graph.storage.lease import TABLES
    from tests.reliability.resume_race import ROOT

    db = tmp_path / "runs.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute(TABLES[0])
    _lease_row(db, "busy", ELSEWHERE, time.time() + 3600)
    done = subprocess.run(
        [sys.executable, "-m", "tests.cli.launch", "hello", "run", "--thread", "busy",
         "--db", str(db), "hi"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
        check=False,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: thread 'busy' is busy") and "another-host" in line
