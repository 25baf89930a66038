"""Open a SQLite connection the way every checkpoint, store and event-log connection is opened.

WAL mode, a busy timeout, the page size (:data:`PRAGMAS`), and a damaged file reported as
:class:`~noema_graph.storage.sqlite.damage.DamagedFileError`. A leaf of ``storage/sqlite``:
the savers, the event log and retention build on it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from noema_graph.errors import ConfigurationError
from noema_graph.storage.sqlite.damage import DamagedFileError, corrupt_file, is_corrupt

BUSY_TIMEOUT_MS = 5_000


def sqlite_file(path: str | Path) -> Path:
    """Return the file a path or ``sqlite:///`` URL names, checked (its folder exists).

    Raises:
        ConfigurationError: another scheme, a directory, or a missing folder.
    """
    text = str(path)
    if text.startswith("sqlite:///"):
        text = text.removeprefix("sqlite:///")
    elif "://" in text:
        scheme = text.split("://", 1)[0]
        raise ConfigurationError(
            "checkpointer url",
            f"unsupported scheme {scheme!r}",
            fix="use a file path or sqlite:///path (postgresql:// URLs: noema_graph.open_backend)",
        )
    target = Path(text).expanduser()
    check_file_path(target, "checkpointer path")
    return target


def check_file_path(target: Path, field: str) -> None:
    """Raise ConfigurationError naming ``field`` unless ``target`` can be a file.

    Raises:
        ConfigurationError: ``target`` is a directory, or its folder does not exist.
    """
    if target.is_dir():
        raise ConfigurationError(
            field, f"{target} is a directory", fix="pass a file path such as runs.sqlite"
        )
    if not target.parent.is_dir():
        raise ConfigurationError(
            field,
            f"folder {target.parent} does not exist",
            fix="create the folder first or choose another path",
        )


PRAGMAS: tuple[str, ...] = (
    "PRAGMA page_size=8192",
    "PRAGMA journal_mode=WAL",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous=NORMAL",
)
"""Settings of every checkpoint and store connection, sync or async.

The page size applies to new files only: 8 KB holds compressed checkpoint rows (~1 KB) with
little waste and keeps a pruned file's fixed cost (a page or more per table and index) low;
measured against 4 and 16 KB in ``bench/size_results.md``.
"""


def connect(path: str | Path) -> sqlite3.Connection:
    """Open a SQLite connection in WAL mode with a busy timeout, shareable across threads.

    Raises:
        DamagedFileError: ``path`` is not a SQLite database, or SQLite finds it malformed.
    """
    target = sqlite_file(path)
    conn = sqlite3.connect(
        target, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
    )
    try:
        for pragma in PRAGMAS:
            conn.execute(pragma)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if not is_corrupt(exc):
            raise
        raise corrupt_file(target, exc) from exc
    return conn


def quick_check(conn: sqlite3.Connection, path: Path | None = None) -> None:
    """Run SQLite's ``PRAGMA quick_check`` on ``conn``; raise if it finds a problem.

    It reads every page (seconds on a large file), so the factories run it only when asked
    (``check=True``); ``noema-graph doctor`` runs the full checks.

    Raises:
        DamagedFileError: the check failed, naming the first problem SQLite reported.
    """
    try:
        found = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        if not is_corrupt(exc):
            raise
        raise corrupt_file(path, exc) from exc
    if found != ["ok"]:
        raise DamagedFileError(
            path, f"PRAGMA quick_check found {len(found)} problem(s), first: {found[0]}"
        )
