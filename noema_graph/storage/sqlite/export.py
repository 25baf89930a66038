"""``export_stock(IN, OUT)``: a copy of a checkpoint file that LangGraph's own saver reads.

The copy is made with SQLite's ``VACUUM INTO`` (every table: checkpoints, writes, the event
log, the stores), then each checkpoint and write is decoded with noema's serializer (which
reads every format noema wrote: compressed values, trace writes linked to their
ToolMessages, linked snapshots) and stored again in the stock format, and the compact marker
is cleared. ``IN`` is opened read-only and never changed; ``OUT`` must not exist. Run it when
no run writes ``IN`` (rows written during the export may be left out).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import PendingWrite
from langgraph.checkpoint.serde.base import SerializerProtocol

from noema_graph.errors import ConfigurationError
from noema_graph.storage.serde import serializer
from noema_graph.storage.sqlite.connection import check_file_path
from noema_graph.storage.sqlite.format import Format, file_format
from noema_graph.storage.sqlite.linked_writes import resolve

_CHECKPOINTS_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints"
)
_UPDATE_CHECKPOINT_SQL = (
    "UPDATE checkpoints SET type = ?, checkpoint = ? "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)
_WRITES_SQL = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value "
    "FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id"
)
_UPDATE_WRITE_SQL = (
    "UPDATE writes SET type = ?, value = ? WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND checkpoint_id = ? AND task_id = ? AND idx = ?"
)
WriteRow = tuple[str, str, str, str, int, str, str | None, bytes | None]
"""A row of the writes table as :data:`_WRITES_SQL` reads it."""


@dataclass(frozen=True, slots=True)
class Exported:
    """What :func:`export_stock` did."""

    source_format: Format
    checkpoints: int
    writes: int


def _checked(source: Path, target: Path) -> None:
    """Raise ConfigurationError unless ``source`` is a file and ``target`` is free."""
    if not source.is_file():
        raise ConfigurationError("IN", f"{source} is not a file", fix="name an existing .sqlite")
    if target.exists():
        raise ConfigurationError(
            "OUT",
            f"{target} already exists; export never overwrites a file",
            fix="choose another OUT path, or delete it first",
        )
    check_file_path(target, "OUT")


def export_stock(source: str | Path, target: str | Path) -> Exported:
    """Write ``target``: ``source`` in the stock format LangGraph's ``SqliteSaver`` reads.

    Raises:
        ConfigurationError: ``source`` is not a SQLite file holding checkpoints, or
            ``target`` exists (it is never overwritten) or its folder does not.
    """
    source, target = Path(source).expanduser(), Path(target).expanduser()
    _checked(source, target)
    with closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)) as src:
        found = _source_format(src, source)
        src.execute("VACUUM INTO ?", (str(target),))
        try:
            checkpoints, writes = _convert(src, target)
        except BaseException:
            target.unlink(missing_ok=True)  # never leave a half-converted copy
            raise
    return Exported(source_format=found, checkpoints=checkpoints, writes=writes)


def _source_format(src: sqlite3.Connection, source: Path) -> Format:
    """Return the format of ``source``; raise ConfigurationError unless it holds checkpoints."""
    try:
        tables = {row[0] for row in src.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        raise ConfigurationError(
            "IN", f"{source} is not a readable SQLite file ({exc})", fix="noema-graph doctor IN"
        ) from exc
    if not {"checkpoints", "writes"} <= tables:
        raise ConfigurationError(
            "IN", f"{source} holds no checkpoints", fix="pass the file noema-graph run wrote"
        )
    return file_format(src)


def _convert(src: sqlite3.Connection, target: Path) -> tuple[int, int]:
    """Store every checkpoint and write of ``target`` (a copy of ``src``) in the stock format."""
    with closing(sqlite3.connect(target, isolation_level=None)) as out:
        out.execute("BEGIN IMMEDIATE")
        serde = serializer()
        checkpoints = _convert_checkpoints(src, out, serde)
        writes = _convert_writes(src, out, serde)
        out.execute("PRAGMA application_id=0")
        out.execute("COMMIT")
        out.execute("VACUUM")
    return checkpoints, writes


def _stock(serde: SerializerProtocol, kind: str | None, blob: bytes | None) -> tuple[Any, Any]:
    """Return ``(kind, blob)`` stored again in the stock format (None values kept)."""
    if kind is None or blob is None:
        return kind, blob
    return serde.dumps_typed(serde.loads_typed((kind, blob)))


def _convert_checkpoints(
    src: sqlite3.Connection, out: sqlite3.Connection, serde: SerializerProtocol
) -> int:
    """Store every checkpoint of ``src`` in the stock format in ``out``; return how many."""
    count = 0
    for thread, ns, cid, kind, blob in src.execute(_CHECKPOINTS_SQL):
        out.execute(_UPDATE_CHECKPOINT_SQL, (*_stock(serde, kind, blob), thread, ns, cid))
        count += 1
    return count


def _groups(src: sqlite3.Connection) -> Iterator[list[WriteRow]]:
    """Yield the writes of ``src`` one checkpoint at a time."""
    rows: Iterator[WriteRow] = iter(src.execute(_WRITES_SQL))
    for _, group in groupby(rows, key=lambda row: row[:3]):
        yield list(group)


def _convert_writes(
    src: sqlite3.Connection, out: sqlite3.Connection, serde: SerializerProtocol
) -> int:
    """Store every write of ``src`` in the stock format in ``out``, linked steps resolved."""
    count = 0
    for rows in _groups(src):
        decoded: list[PendingWrite] = [
            (task, channel, None if kind is None else serde.loads_typed((kind, value or b"")))
            for _, _, _, task, _, channel, kind, value in rows
        ]
        for row, (_, _, value) in zip(rows, resolve(decoded), strict=True):
            thread, ns, cid, task, idx, _, kind, _ = row
            stored = (None, None) if kind is None else serde.dumps_typed(value)
            out.execute(_UPDATE_WRITE_SQL, (*stored, thread, ns, cid, task, idx))
            count += 1
    return count
