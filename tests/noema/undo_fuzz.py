"""Random sequences of the agents' write tools and undos over the sample store (issue 37).

Shared by ``tests/noema/test_undo_fuzz.py`` (200 sequences, fixed seed) and
``bench/bench_undo.py`` (1,000 on SQLite, 200 on PostgreSQL). A sequence mixes the eight
write operations the ten agents' tools run (with real and wrong arguments: a refused call
must leave nothing), dry runs, undos of a whole thread or from a step, and undos of undos.
:func:`undo_everything` then reverts every change set still on record, newest first; the
learner's data must equal the original by query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import strategies as st

from noema_graph.errors import NoemaError
from noema_graph.noema.journal import JournalError, UndoConflict, undo_thread
from noema_graph.noema.journal_schema import JOURNAL_TABLE, SETS_TABLE, in_set
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import fetch_all
from tests.noema.journal_helpers import as_call, snapshot

THREADS = ("t0", "t1", "t2")
CONCEPTS = ("Noble gases", "Atomic number", "Capital cities", "Europe", "New idea", "Other idea")
CARDS = st.sampled_from([1, 2, 5, 202, 203, 209, 210])
"""A few sample cards (202, 203: duplicates the quality scan flags), so that calls of
different threads meet on a row, and ids past the sample's 208 (cards a sequence creates)."""
CATEGORIES = st.one_of(st.none(), st.integers(min_value=1, max_value=12))

_WRITES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "move_card": st.fixed_dictionaries({"card_id": CARDS, "category_id": CATEGORIES}),
    "flag_card": st.fixed_dictionaries(
        {
            "card_id": CARDS,
            "reason": st.sampled_from(["vague", "too easy", "wrong answer"]),
            "severity": st.sampled_from(["low", "medium", "high"]),
        }
    ),
    "link_concepts": st.fixed_dictionaries(
        {
            "source": st.sampled_from(CONCEPTS),
            "target": st.sampled_from(CONCEPTS),
            "kind": st.sampled_from(["prerequisite_of", "related_to", "part_of"]),
        }
    ),
    "record_review": st.fixed_dictionaries(
        {
            "user_id": st.integers(min_value=1, max_value=4),
            "card_id": CARDS,
            "rating": st.integers(min_value=1, max_value=4),
            "response_time_ms": st.integers(min_value=0, max_value=20_000),
            "confidence": st.one_of(st.none(), st.floats(min_value=0, max_value=1)),
        }
    ),
    "create_cards": st.fixed_dictionaries(
        {
            "deck_id": st.integers(min_value=1, max_value=5),
            "cards": st.lists(
                st.fixed_dictionaries(
                    {
                        "front": st.sampled_from(["What is 2+2?", "Capital of Peru?", ""]),
                        "back": st.sampled_from(["4", "Lima"]),
                        "concepts": st.lists(st.sampled_from(CONCEPTS), max_size=2),
                        "category_id": CATEGORIES,
                    }
                ),
                min_size=1,
                max_size=3,
            ),
        }
    ),
    "update_card": st.fixed_dictionaries(
        {
            "card_id": CARDS,
            "back": st.sampled_from(["changed", "Madrid", "4"]),
            "tags": st.lists(st.sampled_from(["a", "b", "geo"]), max_size=2),
        }
    ),
    "ingest_text": st.fixed_dictionaries(
        {
            "title": st.sampled_from(["Notes", "Chapter"]),
            "text": st.sampled_from(["Madrid is in Spain. " * 30, "Short text."]),
            "chunk_size": st.just(200),
            "overlap": st.just(20),
        }
    ),
    "flag_quality_issues": st.just({}),
}


@dataclass(frozen=True)
class Write:
    """One tool call of a thread (``dry``: a dry run)."""

    thread: str
    tool: str
    arguments: dict[str, Any]
    dry: bool = False


@dataclass(frozen=True)
class Undo:
    """``undo THREAD`` (``from_step``: only the thread's calls from its n-th on)."""

    thread: str
    from_call: int | None = None


@dataclass(frozen=True)
class UndoLastUndo:
    """``undo UNDO_ID`` of the newest undo."""


Action = Write | Undo | UndoLastUndo


def _build(thread: str, pair: tuple[str, dict[str, Any]], dry: bool) -> Write:
    return Write(thread, pair[0], pair[1], dry)


_WRITE = st.builds(
    _build,
    st.sampled_from(THREADS),
    st.sampled_from(sorted(_WRITES)).flatmap(lambda t: _WRITES[t].map(lambda a: (t, a))),
    st.integers(min_value=0, max_value=5).map(lambda n: n == 0),  # one call in six runs dry
)
ACTIONS: st.SearchStrategy[list[Action]] = st.lists(
    st.one_of(
        _WRITE,
        _WRITE,
        _WRITE,
        st.builds(Undo, st.sampled_from(THREADS), st.one_of(st.none(), st.integers(0, 3))),
        st.just(UndoLastUndo()),
    ),
    min_size=1,
    max_size=10,
)
"""A sequence: mostly writes, some undos."""


@dataclass
class Tally:
    """What a sequence did (for the bench's figures); ``strict``: check every refusal wrote
    nothing by a full comparison (else by the journal's size, which is cheaper)."""

    strict: bool = False
    since: int = 0
    writes: int = 0
    refused: int = 0
    dry: int = 0
    undos: int = 0
    conflicts: int = 0
    nothing_to_undo: int = 0
    final_undos: int = 0
    undo_ids: list[str] = field(default_factory=list[str])
    calls: dict[str, list[int]] = field(default_factory=dict[str, list[int]])


def _state(store: LearningStore, tally: Tally) -> object:
    if tally.strict:
        return snapshot(store)
    return store.run(fetch_all(f"SELECT COUNT(*) AS n FROM {JOURNAL_TABLE}"), write=False)


def _write(store: LearningStore, action: Write, step: int, tally: Tally) -> None:
    before = snapshot(store) if action.dry and tally.strict else None
    try:
        store.call_journaled(
            action.tool,
            action.arguments,
            as_call(action.thread, f"c{step}", action.tool, step, dry_run=action.dry),
        )
    except NoemaError:  # a refused call (bad id, cycle, thread undone): nothing written
        tally.refused += 1
        return
    if action.dry:
        tally.dry += 1
        assert before is None or snapshot(store) == before, "a dry run changed the store"
    else:
        tally.writes += 1
        tally.calls.setdefault(action.thread, []).append(step)


def _undo(store: LearningStore, thread: str, step: int | None, tally: Tally) -> None:
    before = _state(store, tally)
    try:
        report = store.run(undo_thread(thread, step=step))
    except UndoConflict:
        tally.conflicts += 1
        assert _state(store, tally) == before, "a conflicting undo wrote"
        return
    except JournalError:
        tally.nothing_to_undo += 1
        assert _state(store, tally) == before, "a refused undo wrote"
        return
    tally.undos += 1
    tally.undo_ids.append(report.undo_id)


def run_sequence(
    store: LearningStore, actions: Sequence[Action], *, strict: bool = False, prefix: str = ""
) -> Tally:
    """Apply ``actions``; every refused write, conflict or empty undo must write nothing.

    ``prefix`` goes before the thread names (sequences sharing one store use their own).
    """
    tally = Tally(strict=strict)
    tally.since = _last_id(store)
    for step, action in enumerate(actions, 1):
        if isinstance(action, Write):
            _write(store, replace(action, thread=prefix + action.thread), step, tally)
        elif isinstance(action, Undo):
            thread = prefix + action.thread
            steps = tally.calls.get(thread, [])
            start = None
            if action.from_call is not None and steps:
                start = steps[min(action.from_call, len(steps) - 1)]
            _undo(store, thread, start, tally)
        elif tally.undo_ids:
            _undo(store, tally.undo_ids[-1], None, tally)
    return tally


def _last_id(store: LearningStore) -> int:
    row = store.run(fetch_all(f"SELECT MAX(id) AS n FROM {SETS_TABLE}"), write=False)
    return int(row[0]["n"] or 0)


def undo_everything(store: LearningStore, tally: Tally) -> None:
    """Revert every change set the sequence made, newest first: the store is then as before.

    Sets whose call changed nothing (kept, showing nothing) have nothing to revert.

    A tool call is reverted by ``undo THREAD --step`` its step (steps are unique), an undo by
    ``undo UNDO_ID``. Each must succeed: no conflict may remain once everything newer is
    reverted.
    """
    sets = store.run(
        fetch_all(
            f"SELECT thread_id, tool, step FROM {SETS_TABLE} s WHERE dry_run = 0 AND id > ?"
            f" AND EXISTS (SELECT 1 FROM {JOURNAL_TABLE} WHERE id {in_set('s.id')}"
            " AND (action <> 'update' OR before <> after))"
            " ORDER BY id DESC",
            (tally.since,),
        ),
        write=False,
    )
    for row in sets:
        step = None if row["tool"] == "undo" else int(row["step"])
        store.run(undo_thread(str(row["thread_id"]), step=step))
        tally.final_undos += 1
