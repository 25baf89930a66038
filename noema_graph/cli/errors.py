"""Exit codes of ``noema-graph`` and the one-line errors every user mistake prints.

Every subcommand exits with one of:

==== ==========================================================================
0    success
1    the run ended without success (a limit, ``llm_error``, ``ungrounded``...)
2    usage or input error: a bad flag, an unknown agent or thread, a foreign file
3    paused for a person: an interrupt waits and stdin had no answer; or the thread is busy:
     another run holds its lease (``ThreadBusy``, one line naming the holder)
130  cancelled (Ctrl-C); ``noema-graph resume THREAD`` continues the run
==== ==========================================================================

A user mistake prints one line on stderr, ``error: <what> (fix: <how>)``, never a traceback:
:func:`usage_error` for the commands' own checks, :class:`OneLineErrors` for what click finds
while parsing (bad flag values, missing arguments). Only typer, click, rich and sqlite3 are
imported here (and noema's light error and lease modules), so ``noema-graph --help`` stays
fast.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text
from typer import TyperException

# typer vendors click: its parsing errors are these classes, not the click package's
from typer._click.exceptions import (
    NoArgsIsHelpError,
    UsageError,
)
from typer.core import TyperGroup

from noema_graph.errors import FieldError, NoemaError
from noema_graph.storage.lease import LEASE_TABLE, ThreadBusy
from noema_graph.storage.side_tables import LEDGER_TABLE
from noema_graph.storage.urls import (
    DatabaseUnavailable,
    backend_kind,
    database_url,
    redacted,
    sqlite_path,
)

EXIT_OK = 0
EXIT_UNSUCCESSFUL = 1
EXIT_USAGE = 2
EXIT_PAUSED = 3
EXIT_BUSY = 3
EXIT_CANCELLED = 130

CHECKPOINT_TABLES = frozenset(
    {"checkpoints", "writes", "store", "noema_events", LEASE_TABLE, LEDGER_TABLE}
)
"""Tables a noema-graph run file holds (LangGraph's saver and store, the event log)."""
LEARNING_TABLES = frozenset({"users", "decks", "cards", "reviews"})
"""Tables of a Noema learning store (``noema-graph demo-data``)."""
_SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_DB = Path("noema.sqlite")
"""Where runs keep their checkpoints unless --db says otherwise."""

errors = Console(stderr=True, soft_wrap=True)


class Paused(NoemaError):
    """The run waits for an answer the CLI could not read (stdin closed).

    A control-flow signal: the run stays paused in its checkpoint, and the command that
    caught it exits with code 3.
    """


def say_error(message: str, fix: str | None = None) -> None:
    """Print ``error: message (fix: fix)`` as one line on stderr (no markup is read)."""
    line = Text.assemble(("error: ", "bold red"), message)
    if fix:
        line.append(f" (fix: {fix})")
    errors.print(line)


def failure_code(exc: BaseException) -> int:
    """Return the exit code of a command that failed with ``exc`` (printed as one line).

    3 for a busy thread (another run holds it), 2 for a bad value (a ``FieldError``: its
    message names the fix) and for a database that cannot be reached (its message names the
    URL, password masked), else 1.
    """
    if isinstance(exc, ThreadBusy):
        return EXIT_BUSY
    bad = isinstance(exc, FieldError | DatabaseUnavailable)
    return EXIT_USAGE if bad else EXIT_UNSUCCESSFUL


def usage_error(message: str, fix: str | None = None) -> NoReturn:
    """Print the one-line error and exit with :data:`EXIT_USAGE`."""
    say_error(message, fix)
    raise typer.Exit(EXIT_USAGE)


def resume_hint(thread: str, db: Path | str) -> str:
    """Return the command that continues ``thread`` of ``db`` (a file, or a database URL)."""
    if isinstance(db, str):
        return f"noema-graph resume {thread} --database-url {redacted(db)}"
    where = "" if db == DEFAULT_DB else f" --db {db}"
    return f"noema-graph resume {thread}{where}"


def exit_code(output: Mapping[str, object]) -> int:
    """Return the exit code of a finished run from its output contract.

    0 when ``success`` is true, 130 when it was cancelled, 1 for any other end (a limit,
    an error, an empty or ungrounded result, or no output at all).
    """
    if output.get("success") is True:
        return EXIT_OK
    error = output.get("error")
    if isinstance(error, Mapping) and error.get("code") == "cancelled":
        return EXIT_CANCELLED
    return EXIT_UNSUCCESSFUL


def check_request(text: str, example: str) -> str:
    """Return ``text`` stripped; exit 2 naming the fix when it is empty."""
    if not text.strip():
        usage_error("the request is empty", f"give it as text, e.g. {example}")
    return text.strip()


def check_database(
    path: Path,
    *,
    flag: str = "--db",
    must_exist: bool = False,
    ours: Collection[str] = CHECKPOINT_TABLES | LEARNING_TABLES,
) -> None:
    """Exit 2 unless ``path`` is a file noema-graph may use as its SQLite database.

    A missing file is fine unless ``must_exist`` (a run creates it). A folder, a file that is
    not SQLite (a text file), an unreadable one, or a SQLite file of another application
    (tables, none of them ``ours``) is refused before anything writes to it.
    """
    fix = f"pass {flag} with a noema-graph file or a new path"
    if not path.exists():
        if must_exist:
            usage_error(f"{path} does not exist", f"pass {flag} with the file your runs used")
        return
    if path.is_dir():
        usage_error(f"{path} is a folder, not a database file", fix)
    try:
        with path.open("rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except OSError as exc:
        usage_error(f"cannot read {path}: {exc.strerror or exc}", "check the file's permissions")
    if not header:
        return  # an empty file is a new SQLite database
    if header != _SQLITE_HEADER:
        usage_error(f"{path} is not a SQLite database", fix)
    tables = _tables(path)
    if tables and not tables & set(ours):
        shown = ", ".join(sorted(tables)[:5]) + (", ..." if len(tables) > 5 else "")
        usage_error(f"{path} is the database of another application (tables: {shown})", fix)


def _tables(path: Path) -> set[str]:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        usage_error(f"cannot open {path}: {exc}", "check the file's permissions")
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.DatabaseError as exc:
        usage_error(f"{path} is not a readable SQLite database ({exc})", "pass another file")
    finally:
        conn.close()
    return {str(row[0]) for row in rows}


class OneLineErrors(TyperGroup):
    """The root command group: a parsing error is one line on stderr and exit 2.

    Typer prints click's usage errors as a multi-line panel; here ``Invalid value for
    '--max-iterations': 'x' is not a valid integer`` becomes ``error: noema-graph run:
    Invalid value ... (fix: see noema-graph run --help)``. Everything else behaves as typer's
    standalone mode: the command's ``typer.Exit`` code becomes the process's exit status.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; exit with the command's code, one line per usage error."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except NoArgsIsHelpError as exc:
            from typer import rich_utils  # the help, as typer prints it

            rich_utils.rich_format_error(exc)
            sys.exit(exc.exit_code)
        except UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "noema-graph"
            say_error(f"{where}: {exc.format_message()}", f"see {where} --help")
            sys.exit(EXIT_USAGE)
        except TyperException as exc:
            say_error(exc.format_message())
            sys.exit(exc.exit_code)
        except typer.Abort:
            say_error("aborted")
            sys.exit(EXIT_CANCELLED)
        sys.exit(code if isinstance(code, int) else EXIT_OK)


DatabaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Checkpoints and memory in this database instead of --db: sqlite:///FILE or "
        "postgresql://USER:PASSWORD@HOST:PORT/DB; default: NOEMA_DATABASE_URL, else --db.",
    ),
]


def resolve_database(db: Path | None, url: str | None, *, must_exist: bool = False) -> Path | str:
    """Return where a run keeps checkpoints and memory: a checked SQLite file, or a URL.

    ``--db`` and ``--database-url`` exclude each other; an explicit ``--db`` wins over
    ``NOEMA_DATABASE_URL``, which wins over the default file.
    """
    from noema_graph.errors import FieldError

    if db is not None and url is not None:
        usage_error(
            "--db and --database-url exclude each other",
            "pass only one (--db FILE is the same as --database-url sqlite:///FILE)",
        )
    chosen = db or database_url(explicit=url, env=os.environ, default=DEFAULT_DB)
    try:
        kind = backend_kind(chosen)
    except FieldError as exc:  # an unsupported scheme: the message names the fix
        say_error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    if kind == "postgres":
        return str(chosen)
    path = sqlite_path(chosen)
    check_database(path, must_exist=must_exist)
    return path
