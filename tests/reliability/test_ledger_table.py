"""The ledger's own table: entries of older files carried over, and a Store it cannot use.

A file written before the table kept its ledger as Store items; the first claim on that file
copies them into the table, so a call a crash left ``started`` is still never repeated. A
Store whose database the ledger cannot reach (a custom ``BaseStore``) cannot claim a call
atomically: non-idempotent calls are refused, not run unguarded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from noema_graph.effects import drive
from noema_graph.persistence import sqlite_store
from noema_graph.storage.ledger import LEDGER_NAMESPACE, claim, entries, settle

CALL = {"id": "c1", "name": "charge"}


def test_entries_of_an_older_file_are_carried_into_the_table(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_store(db) as store:  # as the ledger wrote them before its table
        store.put((*LEDGER_NAMESPACE, "t"), "c1", {"status": "started", "tool": "charge"})
        store.put((*LEDGER_NAMESPACE, "t"), "c2", {"status": "paused", "tool": "charge"})
    with sqlite_store(db) as store:
        refusal = drive(claim(store, "t", CALL))
        assert refusal is not None and "interrupted by a crash" in refusal  # not run again
        assert drive(claim(store, "t", {"id": "c2", "name": "charge"})) is None  # paused: runs
        assert entries(store, "t") == {"c1": "started", "c2": "started"}


def test_a_paused_call_is_claimed_again_once() -> None:
    store = InMemoryStore()
    assert drive(claim(store, "t", CALL)) is None
    drive(settle(store, "t", CALL, "paused"))  # the tool called interrupt()
    assert drive(claim(store, "t", CALL)) is None  # the resume runs it from its start
    assert drive(claim(store, "t", CALL)) is not None  # and nobody else


class _CustomStore(BaseStore):
    """A Store of a class the ledger does not know (a service behind an API, say)."""

    def batch(self, ops: Any) -> list[Any]:
        raise NotImplementedError

    async def abatch(self, ops: Any) -> list[Any]:
        raise NotImplementedError


def test_a_store_that_cannot_claim_atomically_refuses_the_call() -> None:
    store = _CustomStore()
    refusal = drive(claim(store, "t", CALL))
    assert refusal is not None and "cannot record a non-idempotent call atomically" in refusal
