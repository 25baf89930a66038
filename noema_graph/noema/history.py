"""The Python face of the change journal: ``changes(thread_id)`` and ``undo(thread_id)``.

Example:
    >>> for change in changes("a1b2c3", db="noema-learning.sqlite"):  # doctest: +SKIP
    ...     print(change.text)
    card 5: category Capitals -> Geography
    >>> undo("a1b2c3", db="noema-learning.sqlite").rows  # doctest: +SKIP
    1
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from noema_graph.noema.journal import (
    Change,
    UndoReport,
    reverted_set_in_effect,
    thread_changes,
    undo_states,
    undo_thread,
    undos_of,
)
from noema_graph.noema.journal_text import readable
from noema_graph.noema.location import store_location
from noema_graph.noema.schema import DEFAULT_LEARNING_DB
from noema_graph.noema.store import LearningStore
from noema_graph.storage.sql.driver import Op

__all__ = ["ChangeSummary", "change_summary", "changes", "undo"]


class ChangeSummary(BaseModel):
    """What a run changed, for the output contract's metadata.

    Attributes:
        count: Rows the thread changed (would change, in a dry run) and still in effect.
        tables: The tables of those rows.
        dry_run: The changes are a dry run's: nothing was written.
        undone: Rows of the thread an undo reverted.
    """

    model_config = ConfigDict(frozen=True)

    count: int
    tables: list[str]
    dry_run: bool = False
    undone: int = 0


def _open(db: str | Path | None) -> LearningStore:
    return LearningStore.open(store_location(db) if db is not None else DEFAULT_LEARNING_DB)


def read_changes(thread_id: str) -> Op[list[Change]]:
    """Return ``thread_id``'s changes, then those of the undos that reverted it, readable."""
    own = yield from thread_changes(thread_id)
    for undo_id in (yield from undos_of(thread_id)):
        own += yield from thread_changes(undo_id)
    shown = yield from readable(own)
    undos = yield from undo_states()
    return [_taken_back(c) if _back(c, undos) else c for c in shown]


def _back(change: Change, undos: dict[str, str | None]) -> bool:
    """Return whether ``change`` was undone by an undo that was itself undone since."""
    return change.undone_by is not None and reverted_set_in_effect(change.undone_by, undos)


def _taken_back(change: Change) -> Change:
    mark = f" [undone by {change.undone_by}]"
    text = change.text.replace(mark, f" [undone by {change.undone_by}, itself undone since]")
    return change.model_copy(update={"text": text})


def changes(thread_id: str, *, db: str | Path | None = None) -> list[Change]:
    """Return every row ``thread_id`` changed in the learning store ``db``, oldest first.

    The undos of the thread follow, with their own ``thread_id`` (the undo's id). Each
    :class:`~noema_graph.noema.journal.Change` has its readable ``text``. An unknown thread,
    or one with no change, gives an empty list.
    """
    with _open(db) as store:
        return store.run(read_changes(thread_id), write=False)


def undo(thread_id: str, *, db: str | Path | None = None, step: int | None = None) -> UndoReport:
    """Revert what ``thread_id`` changed (from LangGraph step ``step`` on), in one transaction.

    ``thread_id`` may be an undo's id: that undo is taken back.

    Raises:
        UndoConflict: A row changed since the run wrote it; nothing was written.
        JournalError: Nothing to undo, or a journal row names a table the store lacks.
    """
    with _open(db) as store:
        return store.run(undo_thread(thread_id, step=step))


def change_summary(thread_id: str, db: str | Path) -> ChangeSummary:
    """Return what ``thread_id`` changed in ``db`` (the output contract's ``changes``)."""
    with _open(db) as store:
        found = store.run(thread_changes(thread_id), write=False)
    dry = [c for c in found if c.dry_run]
    real = [c for c in found if not c.dry_run]
    live = [c for c in real if c.undone_by is None]
    shown = live or dry
    return ChangeSummary(
        count=len(shown),
        tables=sorted({c.table for c in shown}),
        dry_run=not live and bool(dry),
        undone=len(real) - len(live),
    )
