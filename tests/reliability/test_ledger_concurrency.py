"""The non-idempotent ledger under load, and when its Store cannot record a claim.

One SQLite file holds checkpoints and the Store (as the manual allows); 32 async runs in this
process and 8 worker processes of 4 threads run on it at once. Every call must run exactly
once, no "database is locked" may surface, every run's final checkpoint must be there. When
the Store truly cannot record a claim, the call must not run (the ledger fails closed).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from langchain_core.messages import ToolMessage
from langgraph.store.sqlite.aio import AsyncSqliteStore

from noema_graph import build_agent_graph
from noema_graph.persistence import sqlite_store
from noema_graph.storage import ledger
from noema_graph.storage.sqlite.stores import NoemaSqliteStore
from tests.helpers import cfg
from tests.reliability.ledger_load import (
    CALLS,
    async_runs,
    charge_tool,
    config,
    join_workers,
    locked,
    model_for,
    outcome,
    request,
    start_workers,
)

ASYNC_RUNS = 32
PROCESSES = 8
THREADS = 4


async def test_32_async_runs_and_8_processes_share_one_file(tmp_path: Path) -> None:
    db, effects = tmp_path / "runs.sqlite", tmp_path / "effects.log"
    workers = start_workers(db, effects, tmp_path, processes=PROCESSES, threads=THREADS)
    problems = await async_runs(db, effects, "a", ASYNC_RUNS)
    problems.merge(join_workers(workers))

    runs = [f"a{i}" for i in range(ASYNC_RUNS)]
    runs += [f"p{p}-{t}" for p in range(PROCESSES) for t in range(THREADS)]
    result = outcome(db, effects, runs)
    assert problems.errors == []
    assert locked(problems) == []
    assert problems.warnings == []  # no unguarded or refused call, no lost event
    assert result.lost_checkpoints == []
    assert result.repeated == []
    assert result.missing == []
    assert result.refused == []
    assert result.ledger_not_done == []
    assert sum(result.executions.values()) == len(runs) * CALLS


def _short_wait_store(db: Path) -> NoemaSqliteStore:
    """A real SQLite Store on ``db`` that waits only 50 ms for a locked file."""
    with sqlite_store(db):
        pass  # tables created
    conn = sqlite3.connect(db, timeout=0.05, check_same_thread=False, isolation_level=None)
    return NoemaSqliteStore(conn)


def _lock(db: Path) -> sqlite3.Connection:
    """Hold the write lock of ``db`` until the returned connection rolls back."""
    blocker = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN EXCLUSIVE")
    return blocker


def _answers(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_a_claim_that_cannot_be_recorded_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "RETRY_S", 0.2)
    db, effects = tmp_path / "runs.sqlite", tmp_path / "effects.log"
    store = _short_wait_store(db)
    blocker = _lock(db)
    try:
        graph = build_agent_graph(
            cfg(reflection_interval=10), model=model_for("r"), tools=[charge_tool(effects)],
            store=store,
        )  # fmt: skip
        state = graph.invoke(request(), config("r"))
    finally:
        blocker.rollback()
    answers = _answers(state)
    assert len(answers) == CALLS
    assert all(m.status == "error" and "could not record" in str(m.content) for m in answers)
    assert not effects.exists()  # fail closed: nothing ran
    assert state["output"]["success"] is True  # the run went on; the model read the refusals


async def test_an_async_claim_that_cannot_be_recorded_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger, "RETRY_S", 0.2)
    db, effects = tmp_path / "runs.sqlite", tmp_path / "effects.log"
    _short_wait_store(db).conn.close()
    blocker = _lock(db)
    try:
        async with aiosqlite.connect(db, timeout=0.05, isolation_level=None) as conn:
            store = AsyncSqliteStore(conn)  # LangGraph's own store: the ledger is not ours alone
            graph = build_agent_graph(
                cfg(reflection_interval=10), model=model_for("r"),
                tools=[charge_tool(effects)], store=store,
            )  # fmt: skip
            state = await graph.ainvoke(request(), config("r"))
    finally:
        blocker.rollback()
    answers = _answers(state)
    assert [m.status for m in answers] == ["error"] * CALLS
    assert all("could not record" in str(m.content) for m in answers)
    assert not effects.exists()


def test_a_busy_store_is_waited_for_not_refused(tmp_path: Path) -> None:
    db, effects = tmp_path / "runs.sqlite", tmp_path / "effects.log"
    store = _short_wait_store(db)  # SQLite itself gives up after 50 ms; the ledger retries
    blocker = _lock(db)
    release = threading.Timer(0.5, blocker.rollback)
    release.start()
    graph = build_agent_graph(
        cfg(reflection_interval=10), model=model_for("r"), tools=[charge_tool(effects)],
        store=store,
    )  # fmt: skip
    state = graph.invoke(request(), config("r"))
    release.join()
    assert [m.status for m in _answers(state)] == ["success"] * CALLS
    assert effects.read_text().split() == [f"r:{n}" for n in range(CALLS)]
    recorded = ledger.entries(store, "r")
    assert [recorded.get(f"r-c{n}") for n in range(CALLS)] == ["done"] * CALLS
