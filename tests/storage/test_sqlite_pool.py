"""Pooled SQLite connections: lent again, never to two users, never to a replaced file, closed.

The domain tools open the learning store for every call (``pooled=True``); a kept connection
spares the schema parse (the change journal's triggers) that a new one pays.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from noema_graph.agents.domain_tools import domain_spec
from noema_graph.context import RunContext, RunScope, run_scope
from noema_graph.noema.demo import write_demo_data
from noema_graph.noema.history import read_changes
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.connections import SQLITE_IDLE, close_pools, connect_sync
from noema_graph.storage.sql.driver import fetch_all, run_sync


@pytest.fixture(autouse=True)
def _no_kept_connections() -> Iterator[None]:
    close_pools()  # connections kept by earlier tests
    yield
    close_pools()


def _handles(folder: Path) -> list[str]:
    """Return this process's open file descriptors on files under ``folder``."""
    found: list[str] = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)):
            found.append(target)
    return found


def _store(folder: Path, name: str = "learning.db") -> Path:
    path = folder / name
    write_demo_data(path)
    return path


def test_a_closed_pooled_store_is_lent_again_and_close_pools_closes_it(tmp_path: Path) -> None:
    db = _store(tmp_path)
    raws = set[int]()
    for _ in range(5):
        with LearningStore.open(db, pooled=True) as store:
            raws.add(id(store.connection))
            assert store.call("list_categories").categories
    assert len(raws) == 1
    assert _handles(tmp_path)  # kept open between calls
    close_pools()
    assert _handles(tmp_path) == []  # nothing leaked


def test_a_connection_is_never_lent_twice(tmp_path: Path) -> None:
    db = _store(tmp_path)
    first, second = connect_sync(db, pooled=True), connect_sync(db, pooled=True)
    assert first is not second  # both in use: two connections
    first.close()
    first.close()  # closing twice gives it back once
    third, fourth = connect_sync(db, pooled=True), connect_sync(db, pooled=True)
    assert third is first and fourth is not first
    for conn in (second, third, fourth):
        conn.close()


def test_a_replaced_file_gets_a_new_connection(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with LearningStore.open(db, pooled=True) as store:
        old = store.connection
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE marker (x)")
    conn.close()
    with LearningStore.open(db, pooled=True) as store:
        assert store.connection is not old
        tables = run_sync(store.db, fetch_all("SELECT name FROM sqlite_master"), write=False)
        assert "marker" in {row["name"] for row in tables}  # the new file, not the deleted one


def test_a_connection_given_back_inside_a_transaction_is_rolled_back(tmp_path: Path) -> None:
    db = _store(tmp_path)
    conn = connect_sync(db, pooled=True)
    raw = getattr(conn, "raw")  # noqa: B009  # SqliteConnection's, the protocol does not name it
    raw.execute("BEGIN IMMEDIATE")
    raw.execute("UPDATE cards SET back = 'lost'")
    conn.close()
    again = connect_sync(db, pooled=True)
    assert getattr(again, "raw") is raw and not raw.in_transaction  # noqa: B009
    assert raw.execute("SELECT COUNT(*) FROM cards WHERE back = 'lost'").fetchone()[0] == 0
    again.close()


def test_at_most_sqlite_idle_connections_are_kept(tmp_path: Path) -> None:
    files = [tmp_path / f"s{n}.db" for n in range(SQLITE_IDLE + 4)]
    for db in files:
        sqlite3.connect(db).close()  # an empty file: the store migrates it
    for db in files:
        with LearningStore.open(db, pooled=True):
            pass
    kept = {h.removesuffix("-wal").removesuffix("-shm") for h in _handles(tmp_path)}
    assert len(kept) == SQLITE_IDLE  # the oldest were closed
    assert str(files[0]) not in kept and str(files[-1]) in kept


def test_domain_tools_in_many_threads_share_kept_connections_and_journal(tmp_path: Path) -> None:
    db = _store(tmp_path)
    spec = domain_spec("flag_card", db)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(10):
                scope = RunScope("t", "r", RunContext(), thread_id=f"w{n}", call_id=f"c{i}")
                with run_scope(scope):
                    spec.handler(card_id=1 + i, reason=f"worker {n}", severity="low")
        except BaseException as exc:  # reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with LearningStore.open(db) as store:
        for n in range(4):
            assert len(store.run(read_changes(f"w{n}"), write=False)) == 10
    close_pools()
    assert _handles(tmp_path) == []
