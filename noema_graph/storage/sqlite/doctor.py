"""Check a checkpoint file: is it SQLite, is SQLite happy with it, does every row read back.

:func:`diagnose` works on a private copy of the file (and of its ``-wal``), so the original is
never opened by SQLite, let alone changed. It runs, in order:

1. the header: a file that is not SQLite stops here;
2. ``PRAGMA integrity_check`` (``quick_check`` with ``quick=True``);
3. the tables: a SQLite file without a ``checkpoints`` table is not a checkpoint file;
4. every ``checkpoints`` and ``writes`` row decodes (metadata JSON, checkpoint blob, values);
5. thread heads: each thread's newest checkpoint decodes, and no write belongs to a
   checkpoint that is missing;
6. Store items (the tool ledger, memories) hold valid JSON.

:mod:`noema_graph.storage.sqlite.recover` writes what can be recovered into a new file. Run both
while no
run uses the file (a copy taken mid-write can look damaged), and from a process that does not
have the file open through SQLite, as ``noema-graph doctor`` does: they read it with plain file
reads, and closing a file drops every POSIX lock the process holds on it, SQLite's included.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Generator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from noema_graph.errors import ConfigurationError
from noema_graph.storage.serde import serializer
from noema_graph.storage.sqlite.damage import (
    CHECKPOINT_ROWS_SQL,
    WRITE_ROWS_SQL,
    BadRow,
    bad_checkpoints,
    bad_writes,
    is_corrupt,
    not_sqlite,
)
from noema_graph.storage.sqlite.format import Format, file_format

Severity = Literal["damage", "note"]
SHOWN = 10
"""How many bad rows a report lists one by one."""
ORPHAN_WRITES_SQL = """
SELECT w.thread_id, COUNT(*) FROM writes AS w
LEFT JOIN checkpoints AS c ON c.thread_id = w.thread_id
    AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id
WHERE c.thread_id IS NULL GROUP BY w.thread_id ORDER BY w.thread_id
"""
HEADS_SQL = """
SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) FROM checkpoints
GROUP BY thread_id, checkpoint_ns
"""


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of a report: ``damage`` makes the file unhealthy, a ``note`` does not."""

    severity: Severity
    text: str


@dataclass
class Report:
    """What :func:`diagnose` found in one file (or a PostgreSQL database: its URL, masked)."""

    path: Path | str
    findings: list[Finding] = field(default_factory=list[Finding])
    counts: dict[str, int] = field(default_factory=dict[str, int])
    bad: list[BadRow] = field(default_factory=list[BadRow])
    is_sqlite: bool = True
    is_checkpoint_file: bool = True
    format: Format | None = None
    """The checkpoint file's format (``stock`` or ``compact``), when it could be read."""

    @property
    def healthy(self) -> bool:
        """True when nothing is damaged (notes are allowed)."""
        return not any(f.severity == "damage" for f in self.findings)

    def damage(self, text: str) -> None:
        """Record damage."""
        self.findings.append(Finding("damage", text))

    def note(self, text: str) -> None:
        """Record a note (not damage)."""
        self.findings.append(Finding("note", text))

    def lines(self) -> list[str]:
        """Return the report as text lines, verdict first."""
        verdict = "healthy" if self.healthy else "DAMAGED"
        if not self.is_checkpoint_file and not self.healthy:
            verdict = "NOT A CHECKPOINT FILE"
        counts = ", ".join(f"{n} {name}" for name, n in self.counts.items())
        facts = ", ".join(x for x in (counts, self.format and f"{self.format} format") if x)
        head = [f"{self.path}: {verdict}" + (f" ({facts})" if facts else "")]
        return head + [f"  {f.severity}: {f.text}" for f in self.findings]

    def to_dict(self) -> dict[str, object]:
        """Return the report as a JSON-ready dict."""
        return {
            "path": str(self.path),
            "healthy": self.healthy,
            "counts": self.counts,
            "format": self.format,
            "findings": [{"severity": f.severity, "text": f.text} for f in self.findings],
        }


def require_file(path: Path) -> None:
    """Raise ConfigurationError unless ``path`` is an existing regular file."""
    if not path.exists():
        raise ConfigurationError("db", f"{path} does not exist", fix="pass the checkpoint file")
    if not path.is_file():
        raise ConfigurationError("db", f"{path} is not a regular file", fix="pass a file path")


@contextmanager
def private_copy(path: Path) -> Generator[Path]:
    """Yield a copy of ``path`` (with its ``-wal``) in a temporary folder, removed after."""
    with tempfile.TemporaryDirectory(prefix="noema-doctor-") as folder:
        copy = Path(folder) / path.name
        shutil.copyfile(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.is_file():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        yield copy


def diagnose(path: Path, *, quick: bool = False) -> Report:
    """Check the checkpoint file at ``path`` without touching it; return the report.

    Raises:
        ConfigurationError: ``path`` is missing or not a regular file.
    """
    require_file(path)
    report = Report(path)
    if (reason := not_sqlite(path)) is not None:
        report.is_sqlite = report.is_checkpoint_file = False
        report.damage(f"the file {reason}; nothing in it can be read as checkpoints")
        return report
    _size(path, report)
    with private_copy(path) as copy:
        check(copy, report, quick=quick)
    return report


def _size(path: Path, report: Report) -> None:
    """Compare the file's size with the page count its header records (a truncated copy)."""
    with path.open("rb") as f:
        header = f.read(100)
    if len(header) < 100:
        report.damage(f"the file is {len(header)} bytes long, shorter than SQLite's header")
        return
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid = header[24:28] == header[92:96]  # the header's page count is kept up to date
    expected = pages * page_size
    size = path.stat().st_size
    if valid and pages and size < expected:
        report.damage(
            f"the file is {size} bytes but its header records {pages} pages of {page_size} "
            f"bytes ({expected} bytes): it was truncated (an interrupted copy or a full disk?)"
        )


def check(copy: Path, report: Report, *, quick: bool = False) -> None:
    """Run the SQLite-level and row-level checks on ``copy``, adding to ``report``."""
    with closing(sqlite3.connect(copy, isolation_level=None)) as conn:
        conn.execute("PRAGMA writable_schema = ON")  # read a truncated file as far as it goes
        _integrity(conn, report, quick=quick)
        tables = _tables(conn, report)
        if tables is None:
            return
        if "checkpoints" not in tables:
            _not_checkpoints(tables, report)
            return
        if "writes" not in tables:
            report.damage("the 'writes' table is missing (LangGraph keeps pending writes there)")
            return
        _format(conn, report)
        _rows(conn, report)
        _heads(conn, report)
        if "store" in tables:
            _store(conn, report)


def _format(conn: sqlite3.Connection, report: Report) -> None:
    """Record the file's format (:mod:`noema_graph.storage.sqlite.format`); damage says nothing."""
    try:
        report.format = file_format(conn)
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        return


def _integrity(conn: sqlite3.Connection, report: Report, *, quick: bool) -> None:
    pragma = "quick_check" if quick else "integrity_check"
    try:
        found = [str(row[0]) for row in conn.execute(f"PRAGMA {pragma}").fetchall()]
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        report.damage(f"SQLite cannot check the file: {exc}")
        return
    if found != ["ok"]:
        shown = "; ".join(found[:3])
        report.damage(f"PRAGMA {pragma} found {len(found)} problem(s): {shown}")


def _tables(conn: sqlite3.Connection, report: Report) -> set[str] | None:
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        report.damage(f"SQLite cannot read the list of tables: {exc}")
        return None
    return {str(row[0]) for row in rows}


def _not_checkpoints(tables: set[str], report: Report) -> None:
    report.is_checkpoint_file = False
    if not tables:
        report.note("the database is empty: no run has written a checkpoint to it yet")
        return
    names = ", ".join(sorted(tables)[:8])
    report.damage(
        f"not a noema_graph checkpoint file: it has no 'checkpoints' table (tables: {names}); "
        "pass the file your runs used (--db)"
    )


def _count(conn: sqlite3.Connection, table: str, report: Report) -> None:
    try:
        report.counts[table] = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        report.damage(f"SQLite cannot count the rows of {table!r}: {exc}")


def _rows(conn: sqlite3.Connection, report: Report) -> None:
    """Decode every checkpoint and write; list the rows that fail."""
    for table in ("checkpoints", "writes"):
        _count(conn, table, report)
    serde = serializer()
    scans = (
        ("checkpoints", CHECKPOINT_ROWS_SQL, bad_checkpoints),
        ("writes", WRITE_ROWS_SQL, bad_writes),
    )
    for table, sql, scan in scans:
        try:
            for row in scan(serde, conn.execute(sql)):
                report.bad.append(row)
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                raise
            report.damage(f"reading table {table!r} stopped at a damaged page: {exc}")
    for row in report.bad[:SHOWN]:
        report.damage(
            f"{row.table} row of thread {row.thread_id!r}, checkpoint {row.checkpoint_id!r}: "
            f"{row.reason}"
        )
    if len(report.bad) > SHOWN:
        report.damage(f"... and {len(report.bad) - SHOWN} more rows that cannot be read back")


def _heads(conn: sqlite3.Connection, report: Report) -> None:
    """Check that each thread's newest checkpoint reads back and no write is orphaned."""
    try:
        heads = conn.execute(HEADS_SQL).fetchall()
        orphans = conn.execute(ORPHAN_WRITES_SQL).fetchall()
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        report.damage(f"SQLite cannot list the threads: {exc}")
        return
    report.counts["threads"] = len({row[0] for row in heads})
    bad = {(r.thread_id, r.checkpoint_id) for r in report.bad if r.table == "checkpoints"}
    for thread_id, _ns, head in heads:
        if (str(thread_id), str(head)) in bad:
            report.damage(
                f"thread {thread_id!r}: its newest checkpoint {head!r} cannot be read back, so "
                "get_state and resume fail (--repair drops it: the thread resumes from its "
                "newest checkpoint that reads back)"
            )
    for thread_id, count in orphans:
        report.damage(f"thread {thread_id!r}: {count} writes belong to no checkpoint in the file")


def _store(conn: sqlite3.Connection, report: Report) -> None:
    """Check that every Store item (ledger entries, memories) holds JSON."""
    bad: list[str] = []
    try:
        rows = conn.execute("SELECT prefix, key, value FROM store")
        for prefix, key, value in rows:
            try:
                json.loads(value)
            except (ValueError, TypeError):
                bad.append(f"{prefix}/{key}")
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        report.damage(f"reading the Store table stopped at a damaged page: {exc}")
    if bad:
        shown = ", ".join(bad[:SHOWN])
        report.damage(f"{len(bad)} Store item(s) do not hold JSON: {shown}")
