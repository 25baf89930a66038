"""Damaged checkpoint files: recognise the damage and say where it is and what to do.

A SQLite file can be damaged below SQLite (a truncated copy, pages overwritten, a text file
under the expected name) or above it (a checkpoint row whose blob no longer decodes). Either
way, a read raises a bare ``sqlite3.DatabaseError`` or a decoder's ``ValueError`` deep inside
LangGraph. :class:`DamagedFileError` replaces those with the file, the thread and checkpoint
when known, and the fix (``noema-graph doctor``). The row checks here are shared by the
savers (to confirm a decode error comes from a damaged row, not from a bug) and by
:mod:`noema_graph.storage.sqlite.doctor`.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Generator, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from noema_graph.errors import NoemaError

SQLITE_HEADER = b"SQLite format 3\x00"
CORRUPT_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
DECODE_ERRORS: tuple[type[Exception], ...] = (
    ValueError,  # msgpack ("invalid UTF-8 string", ExtraData), json, UnicodeDecodeError
    TypeError,  # a blob that decodes to the wrong shape (an int instead of a checkpoint)
    KeyError,
    AttributeError,
    NotImplementedError,  # an unknown serialisation type
    zlib.error,  # a compressed value that is not zlib data
)
"""What decoding a damaged row raises (confirmed against the file before it is reported)."""


class DamagedFileError(NoemaError):
    """A checkpoint file is damaged, or is not a checkpoint file at all.

    ``path``, ``thread_id`` and ``checkpoint_id`` say where (each may be unknown); the
    message ends with the fix: ``noema-graph doctor PATH`` to see the damage and
    ``--repair`` to recover what can be recovered into a new file.
    """

    def __init__(
        self,
        path: Path | None,
        problem: str,
        *,
        thread_id: str | None = None,
        checkpoint_id: str | None = None,
        fix: str | None = None,
    ) -> None:
        """Describe ``problem`` in the file at ``path``, at a thread and checkpoint if known."""
        self.path = path
        self.problem = problem
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        where = f"checkpoint file {str(path)!r}" if path is not None else "checkpoint file"
        at = ""
        if thread_id is not None:
            at = f" (thread {thread_id!r}"
            at += f", checkpoint {checkpoint_id!r})" if checkpoint_id else ")"
        target = str(path) if path is not None else "FILE"
        self.fix = fix or (
            f"run `noema-graph doctor {target}` to see what is damaged, then "
            f"`noema-graph doctor {target} --repair` to recover what can be recovered into a "
            "new file (the original is left untouched)"
        )
        super().__init__(f"{where}: {problem}{at} (fix: {self.fix})")


def file_of(saver: object) -> Path | None:
    """Return the file a saver opened by :mod:`~.sqlite.persistence` reads (else None)."""
    path = getattr(saver, "noema_path", None)
    return path if isinstance(path, Path) else None


def is_corrupt(exc: BaseException) -> bool:
    """Return True when ``exc`` is SQLite saying the file is malformed or not a database."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in CORRUPT_CODES
    text = str(exc)
    return "malformed" in text or "not a database" in text


def not_sqlite(path: Path) -> str | None:
    """Return why ``path`` is not a SQLite database (None when its header is SQLite's).

    An empty file is fine: SQLite makes a database of it. This opens and closes the file:
    never call it on a file this process has open through SQLite (see :func:`corrupt_file`).
    """
    with path.open("rb") as f:
        head = f.read(len(SQLITE_HEADER))
    if not head or head == SQLITE_HEADER:
        return None
    shown = head.decode("ascii", "replace")
    return f"is not a SQLite database (it starts with {shown!r}, not SQLite's header)"


NOT_SQLITE_FIX = "pass the checkpoint file your runs used, or move this file out of the way"


def corrupt_file(path: Path | None, exc: sqlite3.DatabaseError, **where: Any) -> DamagedFileError:
    """Return the error for SQLite's "malformed" / "not a database" ``exc`` on ``path``.

    Only for "not a database" is the file's header read (to show what the file is): reading,
    then closing, a file this process also has open through SQLite would drop SQLite's POSIX
    locks on it, and a file that is not a database has no such connection.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_NOTADB and path is not None and path.is_file():
        reason = not_sqlite(path)
        if reason is not None:
            return DamagedFileError(path, reason, fix=NOT_SQLITE_FIX, **where)
    return DamagedFileError(path, f"SQLite reports: {exc}", **where)


KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id"),
    "writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"),
}
"""Primary key of each checkpoint table (``writes`` has no rowid in files noema creates)."""


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row of the checkpoint tables that cannot be decoded, named by its primary key."""

    table: str
    key: tuple[object, ...]
    thread_id: str
    checkpoint_id: str
    reason: str


def checkpoint_problem(
    serde: SerializerProtocol, kind: str | None, blob: bytes | None, metadata: str | bytes | None
) -> str | None:
    """Return why a ``checkpoints`` row cannot be read back (None when it can)."""
    try:
        if metadata is not None and not isinstance(json.loads(metadata), Mapping):
            return "its metadata is not a JSON object"
    except (ValueError, TypeError) as exc:
        return f"its metadata cannot be decoded ({type(exc).__name__}: {exc})"
    if kind is None or blob is None:
        return "its checkpoint blob is missing"
    try:
        value = serde.loads_typed((kind, blob))
    except DECODE_ERRORS as exc:
        return f"its checkpoint blob cannot be decoded ({type(exc).__name__}: {exc})"
    if not isinstance(value, Mapping) or not isinstance(value.get("channel_values"), Mapping):
        return f"its checkpoint blob decodes to a {type(value).__name__}, not a checkpoint"
    return None


def write_problem(serde: SerializerProtocol, kind: str | None, blob: bytes | None) -> str | None:
    """Return why a ``writes`` row cannot be read back (None when it can)."""
    if kind is None:
        return "its value type is missing"
    try:
        serde.loads_typed((kind, blob or b""))
    except DECODE_ERRORS as exc:
        return f"its value cannot be decoded ({type(exc).__name__}: {exc})"
    return None


CHECKPOINT_ROWS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, type, checkpoint, metadata FROM checkpoints"
)
WRITE_ROWS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, type, value FROM writes"
)


def bad_checkpoints(serde: SerializerProtocol, rows: Iterable[Any]) -> Generator[BadRow]:
    """Yield the rows of :data:`CHECKPOINT_ROWS_SQL` that cannot be read back."""
    for thread_id, ns, checkpoint_id, kind, blob, metadata in rows:
        if (reason := checkpoint_problem(serde, kind, blob, metadata)) is not None:
            key = (thread_id, ns, checkpoint_id)
            yield BadRow("checkpoints", key, str(thread_id), str(checkpoint_id), reason)


def bad_writes(serde: SerializerProtocol, rows: Iterable[Any]) -> Generator[BadRow]:
    """Yield the rows of :data:`WRITE_ROWS_SQL` that cannot be read back."""
    for thread_id, ns, checkpoint_id, task_id, idx, kind, blob in rows:
        if (reason := write_problem(serde, kind, blob)) is not None:
            key = (thread_id, ns, checkpoint_id, task_id, idx)
            yield BadRow("writes", key, str(thread_id), str(checkpoint_id), reason)


def bad_rows(
    serde: SerializerProtocol, checkpoints: Iterable[object], writes: Iterable[object]
) -> Generator[BadRow]:
    """Yield the checkpoint rows, then the write rows, that cannot be read back."""
    yield from bad_checkpoints(serde, checkpoints)
    yield from bad_writes(serde, writes)


def thread_filter(thread_id: str | None) -> tuple[str, tuple[str, ...]]:
    """Return a WHERE clause and its parameters selecting one thread (or every thread)."""
    return (" WHERE thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())


def first_bad_row(
    conn: sqlite3.Connection, serde: SerializerProtocol, thread_id: str | None
) -> BadRow | None:
    """Return the first undecodable row of ``thread_id`` (or of any thread), or None."""
    where, params = thread_filter(thread_id)
    checkpoints = conn.execute(CHECKPOINT_ROWS_SQL + where, params)
    writes = conn.execute(WRITE_ROWS_SQL + where, params)
    return next(bad_rows(serde, checkpoints, writes), None)


def damaged_row(path: Path | None, row: BadRow) -> DamagedFileError:
    """Return the error naming an undecodable ``row`` of the file at ``path``."""
    problem = f"a row of table {row.table!r} cannot be read back: {row.reason}"
    return DamagedFileError(path, problem, thread_id=row.thread_id, checkpoint_id=row.checkpoint_id)


@contextmanager
def decoding_row(
    path: Path | None, thread_id: str, checkpoint_id: str | None = None
) -> Generator[None]:
    """Turn a failure while decoding one known row into a :class:`DamagedFileError`."""
    try:
        yield
    except DECODE_ERRORS as exc:
        problem = f"a checkpoint cannot be decoded ({type(exc).__name__}: {exc})"
        raise DamagedFileError(
            path, problem, thread_id=thread_id, checkpoint_id=checkpoint_id
        ) from exc
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        raise corrupt_file(path, exc, thread_id=thread_id, checkpoint_id=checkpoint_id) from exc
