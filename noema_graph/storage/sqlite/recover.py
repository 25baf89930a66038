"""Recover what can be recovered from a damaged checkpoint file into a new file.

:func:`repair` never opens the original with SQLite: it works on a private copy
(:func:`noema_graph.storage.sqlite.doctor.private_copy`) and builds the new file beside its
destination,
renaming it into place only when done. Two ways to get the rows out, best first:

* SQLite's own ``.recover`` through the ``sqlite3`` command-line tool, which reads every page
  it can, also those the damaged b-trees no longer reach;
* without that tool, the ``sqlite3`` module: the schema, then each table's rows in rowid
  order, skipping past pages that fail (an ``iterdump`` that does not stop at the first
  damaged page); a table without rowid (``writes``) is read in key order from both ends.

Then rows that do not read back are dropped (checkpoints, writes, the writes of dropped
checkpoints, Store items that are not JSON), except tool-ledger entries: an unreadable one is
rewritten as ``started``, so a resume refuses to repeat that call rather than forgetting it
ran. The new file is then checked with :func:`noema_graph.storage.sqlite.doctor.diagnose`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from noema_graph.errors import ConfigurationError
from noema_graph.storage.side_tables import LEDGER_NAMESPACE
from noema_graph.storage.sqlite.damage import KEY_COLUMNS, DamagedFileError, is_corrupt, not_sqlite
from noema_graph.storage.sqlite.doctor import Report, check, diagnose, private_copy, require_file

CLI_TIMEOUT_S = 600
MAX_SKIPS = 64
"""Consecutive damaged spots a table copy skips before it gives up on the table."""
LEDGER_PREFIX = ".".join(LEDGER_NAMESPACE) + "."
LEDGER_UNKNOWN = json.dumps({"status": "started", "tool": "unknown (recovered)"})
ORPHAN_WRITES_SQL = """
DELETE FROM writes WHERE NOT EXISTS (
    SELECT 1 FROM checkpoints AS c WHERE c.thread_id = writes.thread_id
    AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)
"""


@dataclass
class Recovery:
    """What :func:`repair` wrote and dropped."""

    out: Path
    method: str
    rows: dict[str, int] = field(default_factory=dict[str, int])
    dropped: list[str] = field(default_factory=list[str])
    report: Report | None = None

    def to_dict(self) -> dict[str, object]:
        """Return what happened as a JSON-ready dict."""
        report = None if self.report is None else self.report.to_dict()
        return {**vars(self), "out": str(self.out), "report": report}

    def lines(self) -> list[str]:
        """Return what happened as text lines."""
        rows = ", ".join(f"{n} {table}" for table, n in self.rows.items()) or "no rows"
        head = [f"recovered into {self.out} with {self.method}: {rows}"]
        head += [f"  dropped: {line}" for line in self.dropped]
        return head + (self.report.lines() if self.report is not None else [])


def default_out(path: Path) -> Path:
    """Return where the recovered copy of ``path`` goes by default: beside it."""
    return path.with_name(f"{path.stem}.recovered{path.suffix or '.sqlite'}")


def repair(path: Path, out: Path | None = None, *, sqlite_cli: str | None = None) -> Recovery:
    """Recover what can be read from ``path`` into the new file ``out``; check ``out``.

    Args:
        path: The damaged file (left untouched).
        out: The new file (default :func:`default_out`); must not exist.
        sqlite_cli: The ``sqlite3`` command-line tool; None looks it up on PATH, ``""`` skips
            it (the ``sqlite3`` module alone).

    Raises:
        ConfigurationError: ``path`` is missing, or ``out`` exists or is ``path``.
        DamagedFileError: nothing can be recovered (not a SQLite file, unreadable schema).
    """
    require_file(path)
    target = out or default_out(path)
    if target.exists() or target.resolve() == path.resolve():
        raise ConfigurationError(
            "out", f"{target} already exists", fix="pass --out with a new file name"
        )
    if (reason := not_sqlite(path)) is not None:
        raise DamagedFileError(
            path, f"{reason}: nothing can be recovered", fix="restore the file from a backup"
        )
    cli = shutil.which("sqlite3") if sqlite_cli is None else sqlite_cli
    building = target.with_name(f".{target.name}.building")
    building.unlink(missing_ok=True)
    try:
        with private_copy(path) as copy:
            method = _with_cli(cli, copy, building) if cli else None
            if method is None:
                building.unlink(missing_ok=True)
                method = _with_module(copy, building, path)
        recovery = Recovery(target, method)
        _clean(building, recovery)
        os.replace(building, target)
    finally:
        building.unlink(missing_ok=True)
    recovery.report = diagnose(target)
    return recovery


def _with_cli(cli: str, copy: Path, out: Path) -> str | None:
    """Recover with ``sqlite3 COPY .recover``; return the method, or None if it failed."""
    dump = subprocess.run(
        [cli, str(copy), ".recover"], capture_output=True, timeout=CLI_TIMEOUT_S, check=False
    )
    if dump.returncode != 0 or not dump.stdout:
        return None
    load = subprocess.run(
        [cli, str(out)], input=dump.stdout, capture_output=True, timeout=CLI_TIMEOUT_S, check=False
    )
    return "sqlite3 .recover" if load.returncode == 0 else None


def _with_module(copy: Path, out: Path, original: Path) -> str:
    """Recover with the sqlite3 module: the schema, then each table's readable rows."""
    with (
        closing(sqlite3.connect(copy, isolation_level=None)) as src,
        closing(sqlite3.connect(out, isolation_level=None)) as dst,
    ):
        src.execute("PRAGMA writable_schema = ON")  # read a truncated file as far as it goes
        try:
            schema = src.execute(
                "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                raise
            raise DamagedFileError(
                original,
                f"SQLite cannot read the schema ({exc}): nothing can be recovered this way",
                fix="install the sqlite3 command-line tool (its .recover reads more) and retry",
            ) from exc
        tables = [(n, sql) for kind, n, sql in schema if kind == "table" and _copyable(n, sql)]
        dst.execute("BEGIN")
        for name, sql in tables:
            dst.execute(sql)
            if sql.upper().rstrip().endswith("WITHOUT ROWID"):
                _copy_keyed(src, dst, name)
            else:
                _copy_rows(src, dst, name)
        for kind, _name, sql in schema:
            if kind in ("index", "trigger", "view"):
                dst.execute(sql)
        dst.execute("COMMIT")
    return "the sqlite3 module (row by row)"


def _copyable(name: str, sql: str) -> bool:
    return not name.startswith("sqlite_") and not sql.upper().startswith("CREATE VIRTUAL")


def _copy_rows(src: sqlite3.Connection, dst: sqlite3.Connection, table: str) -> None:
    """Copy ``table``'s rows, forwards then backwards in rowid order, jumping past damage."""
    columns = [str(row[1]) for row in src.execute(f'PRAGMA table_info("{table}")')]
    names = ", ".join(f'"{c}"' for c in ["rowid", *columns])
    marks = ", ".join("?" * (len(columns) + 1))
    insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({marks})'
    forward = f'SELECT rowid, * FROM "{table}" WHERE rowid > ? ORDER BY rowid'
    backward = f'SELECT rowid, * FROM "{table}" WHERE rowid < ? ORDER BY rowid DESC'
    width = len(columns) + 1
    reached = _scan(src, dst, forward, insert, width, start=-(2**63), sign=1)
    if reached is not None:  # a damaged spot stopped the forward scan: come from the end
        _scan(src, dst, backward, insert, width, start=2**63 - 1, sign=-1, stop=reached)


def _unreadable(exc: sqlite3.DatabaseError) -> bool:
    """Return True when reading a row failed on damage: a malformed page, or garbage text."""
    return is_corrupt(exc) or "Could not decode to UTF-8" in str(exc)


def _copy_keyed(src: sqlite3.Connection, dst: sqlite3.Connection, table: str) -> None:
    """Copy a WITHOUT ROWID table's rows in key order, then from the end back to a damaged spot.

    Such a table has no rowid to jump past damage with: rows between the first and the last
    damaged spot are lost on this path (SQLite's ``.recover`` reads them).
    """
    info = list(src.execute(f'PRAGMA table_info("{table}")'))
    columns = [str(row[1]) for row in info]
    key = [f'"{row[1]}"' for row in sorted(info, key=lambda r: r[5]) if row[5]]
    names = ", ".join(f'"{c}"' for c in columns)
    insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'
    for order in ("ASC", "DESC"):
        ordering = ", ".join(f"{column} {order}" for column in key)
        select = f'SELECT {names} FROM "{table}" ORDER BY {ordering}'
        try:
            for row in src.execute(select):
                if dst.execute(insert, row).rowcount == 0:  # met the rows copied forwards
                    return
            return
        except sqlite3.DatabaseError as exc:
            if not _unreadable(exc):
                raise


def _scan(
    src: sqlite3.Connection,
    dst: sqlite3.Connection,
    select: str,
    insert: str,
    width: int,
    *,
    start: int,
    sign: int,
    stop: int | None = None,
) -> int | None:
    """Copy rows from rowid ``start`` on in direction ``sign``; return None if it got through.

    At a damaged spot it jumps ahead by 1, 2, 4, ... rowids, at most :data:`MAX_SKIPS` times
    in a row, and returns the last rowid it reached when it gives up.
    """
    last, step, skips = start, 1, 0
    while skips <= MAX_SKIPS:
        try:
            for row in src.execute(select, (last,)):
                if stop is not None and sign * (int(row[0]) - stop) <= 0:
                    return None
                dst.execute(insert, row[:width])
                last, step, skips = int(row[0]), 1, 0
            return None
        except sqlite3.DatabaseError as exc:
            if not _unreadable(exc):
                raise
            base = max(last, 0) if sign > 0 else min(last, 2**62)
            last = max(min(base + sign * step, 2**63 - 1), -(2**63))
            step, skips = min(step * 2, 2**32), skips + 1
    return last


def _clean(out: Path, recovery: Recovery) -> None:
    """Drop what does not read back from the recovered file; count what is left."""
    report = Report(out)
    check(out, report)
    with closing(sqlite3.connect(out, isolation_level=None)) as conn:
        conn.execute("BEGIN")
        for row in report.bad:
            where = " AND ".join(f"{column} = ?" for column in KEY_COLUMNS[row.table])
            conn.execute(f"DELETE FROM {row.table} WHERE {where}", row.key)
            recovery.dropped.append(
                f"{row.table} row of thread {row.thread_id!r}, checkpoint "
                f"{row.checkpoint_id!r} ({row.reason})"
            )
        if _has_table(conn, "checkpoints") and _has_table(conn, "writes"):
            _drop_orphan_writes(conn, recovery)
        _clean_store(conn, recovery)
        conn.execute("COMMIT")
        for table in ("checkpoints", "writes", "store"):
            if _has_table(conn, table):
                count = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                recovery.rows[table] = int(count)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None


def _drop_orphan_writes(conn: sqlite3.Connection, recovery: Recovery) -> None:
    gone = conn.execute(ORPHAN_WRITES_SQL).rowcount
    if gone:
        recovery.dropped.append(f"{gone} writes whose checkpoint was not recovered")


def _clean_store(conn: sqlite3.Connection, recovery: Recovery) -> None:
    if not _has_table(conn, "store"):
        return
    for rowid, prefix, key, value in conn.execute(
        "SELECT rowid, prefix, key, value FROM store"
    ).fetchall():
        try:
            json.loads(value)
            continue
        except (ValueError, TypeError):
            pass
        if str(prefix).startswith(LEDGER_PREFIX):
            conn.execute("UPDATE store SET value = ? WHERE rowid = ?", (LEDGER_UNKNOWN, rowid))
            recovery.dropped.append(
                f"ledger entry {prefix}/{key} was unreadable: kept as 'started' (not repeated)"
            )
        else:
            conn.execute("DELETE FROM store WHERE rowid = ?", (rowid,))
            recovery.dropped.append(f"Store item {prefix}/{key} (not JSON)")
