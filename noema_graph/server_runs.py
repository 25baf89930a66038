"""Servers that share one database end the runs of a server that died: heartbeats and a reaper.

Aegra without Redis runs each run inside the server process that received it. When that
process dies (SIGKILL, a crash, its machine), the run's row in Aegra's ``runs`` table says
``running`` for ever and its thread stays ``busy``. Every server of a deployment
(``deploy/aegra_app.py``) runs a :class:`Heartbeat`: a thread that every ``heartbeat_s``
seconds

1. writes the server's row in :data:`TABLE` (``heartbeat_at``, and ``active``: the runs it
   executes now), and
2. marks ``error`` every active run (``pending`` or ``running``) that no live server lists
   (a live server: a heartbeat younger than ``ttl_s``) and that has not changed for
   ``ttl_s``; its message says how to go on, and its thread becomes ``error`` when no other
   run of it is active. The thread keeps its checkpoints: any server resumes it from the
   last one (``input: null`` and the ``checkpoint`` of ``GET /threads/{id}/state``).

So a killed server's run is marked failed within ``ttl_s + heartbeat_s`` seconds (12 s by
default), by whichever server looks first; the row updates are single statements, so servers
looking at once do no harm. Times are the database's (``now()``): the servers' clocks may
differ. The thread, not the event loop, keeps time, so a busy loop does not make a live
server look dead; ``ttl_s`` must exceed any pause of a whole process (a long GC or swap).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from noema_graph.errors import ConfigurationError

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import TupleRow

logger = logging.getLogger(__name__)

TABLE: Final = "noema_servers"
HEARTBEAT_ENV = "NOEMA_SERVER_HEARTBEAT_S"
TTL_ENV = "NOEMA_SERVER_TTL_S"
SETUP_LOCK = 0x6E6F656D6153  # pg_advisory_xact_lock key of the table's creation
DEAD_MESSAGE = (
    "the server running this run stopped (no heartbeat for {ttl:g} s): the thread keeps its "
    "checkpoints; resume it on any server with input null and the checkpoint of "
    "GET /threads/{{thread_id}}/state"
)
DDL: Final = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    server_id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    active TEXT[] NOT NULL DEFAULT '{{}}'
)
"""
BEAT_SQL: Final = f"""
INSERT INTO {TABLE} (server_id, host, pid, active) VALUES (%s, %s, %s, %s)
ON CONFLICT (server_id) DO UPDATE SET heartbeat_at = now(), active = EXCLUDED.active
"""
REAP_SQL: Final = f"""
UPDATE runs SET status = 'error', error_message = %(message)s, updated_at = now()
WHERE status IN ('pending', 'running')
  AND updated_at < now() - make_interval(secs => %(ttl)s)
  AND NOT EXISTS (
    SELECT 1 FROM {TABLE} s
    WHERE s.heartbeat_at > now() - make_interval(secs => %(ttl)s) AND runs.run_id = ANY(s.active)
  )
RETURNING run_id, thread_id
"""
THREADS_SQL: Final = """
UPDATE thread SET status = 'error', updated_at = now()
WHERE thread_id = ANY(%s) AND status = 'busy'
  AND NOT EXISTS (
    SELECT 1 FROM runs r WHERE r.thread_id = thread.thread_id AND r.status IN ('pending', 'running')
  )
"""
FORGET_SQL: Final = (
    f"DELETE FROM {TABLE} WHERE server_id = %s OR heartbeat_at < now() - interval '1 day'"
)


@dataclass(frozen=True, slots=True)
class Timing:
    """How often a server beats, and how old a heartbeat may be before the server is dead."""

    heartbeat_s: float = 2.0
    ttl_s: float = 10.0

    def __post_init__(self) -> None:
        """Refuse a ``ttl_s`` that a live server could miss (under two heartbeats)."""
        if self.heartbeat_s <= 0 or self.ttl_s < 2 * self.heartbeat_s:
            raise ConfigurationError(
                TTL_ENV,
                f"{self.ttl_s:g} s with heartbeats every {self.heartbeat_s:g} s",
                fix="use a heartbeat above 0 s and a ttl of at least two heartbeats",
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Timing:
        """Return the timing in :data:`HEARTBEAT_ENV` and :data:`TTL_ENV` (defaults otherwise).

        Raises:
            ConfigurationError: a value is not a number, or the ttl is under two heartbeats.
        """
        values: dict[str, float] = {}
        for name, key in ((HEARTBEAT_ENV, "heartbeat_s"), (TTL_ENV, "ttl_s")):
            if text := env.get(name, "").strip():
                try:
                    values[key] = float(text)
                except ValueError:
                    raise ConfigurationError(
                        name, f"{text!r} is not a number of seconds", fix=f"e.g. {name}=10"
                    ) from None
        return cls(**values)


def ensure_table(conn: Connection[TupleRow]) -> None:
    """Create :data:`TABLE` if missing, one server at a time."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK,))
        conn.execute(DDL)


def beat(conn: Connection[TupleRow], server_id: str, active: Iterable[str]) -> None:
    """Record that ``server_id`` is alive and executes the runs ``active``."""
    conn.execute(BEAT_SQL, (server_id, socket.gethostname(), os.getpid(), sorted(active)))


def reap(conn: Connection[TupleRow], ttl_s: float) -> list[tuple[str, str]]:
    """Mark failed the active runs no live server executes; return their (run, thread) ids."""
    with conn.transaction():
        message = DEAD_MESSAGE.format(ttl=ttl_s)
        rows = conn.execute(REAP_SQL, {"message": message, "ttl": ttl_s}).fetchall()
        ended = [(str(row[0]), str(row[1])) for row in rows]
        if ended:
            conn.execute(THREADS_SQL, (sorted({thread for _, thread in ended}),))
    return ended


def forget(conn: Connection[TupleRow], server_id: str) -> None:
    """Delete ``server_id``'s row (a server stopping) and rows silent for a day."""
    conn.execute(FORGET_SQL, (server_id,))


@dataclass
class Heartbeat:
    """A daemon thread that beats for this server and reaps dead servers' runs.

    Use it as a context manager around the server's life. ``active`` returns the ids of the
    runs this process executes now (Aegra: the keys of its ``active_runs``).
    """

    url: str
    active: Callable[[], Iterable[str]]
    timing: Timing = field(default_factory=Timing)
    server_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    reaped: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    ticked: threading.Event = field(default_factory=threading.Event)
    """Set after each beat-and-reap of the thread (tests wait on it, then clear it)."""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        """Make the server id unique even when a pid is reused."""
        self.server_id = f"{self.server_id}:{uuid.uuid4().hex[:8]}"

    def __enter__(self) -> Heartbeat:
        """Create the table, beat once, then keep beating in a daemon thread."""
        with _connect(self.url) as conn:
            ensure_table(conn)
            beat(conn, self.server_id, _runs(self.active))
        self._thread = threading.Thread(target=self._loop, name="noema-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        """Stop beating and delete this server's row (its runs are reaped after ``ttl_s``)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        try:
            with _connect(self.url) as conn:
                forget(conn, self.server_id)
        except _errors() as exc:  # the row goes stale; other servers treat it as dead
            logger.warning("could not delete server row %s: %s", self.server_id, exc)

    def tick(self, conn: Connection[TupleRow]) -> None:
        """Beat once and reap once."""
        beat(conn, self.server_id, _runs(self.active))
        ended = reap(conn, self.timing.ttl_s)
        if ended:
            self.reaped.extend(ended)
            logger.warning("marked failed the runs of a stopped server: %s", ended)

    def _loop(self) -> None:
        conn: Connection[TupleRow] | None = None
        while not self._stop.wait(self.timing.heartbeat_s):
            try:
                conn = conn if conn is not None and not conn.closed else _connect(self.url)
                self.tick(conn)
                self.ticked.set()
            except _errors() as exc:  # the database is away: try again on the next beat
                logger.warning("server heartbeat failed: %s", exc)
                conn = None
            except RuntimeError as exc:  # the run registry kept changing: the last beat stands
                logger.warning("server heartbeat skipped: %s", exc)
        if conn is not None:
            conn.close()


def _runs(active: Callable[[], Iterable[str]]) -> list[str]:
    """Return a snapshot of ``active()``, retried when another thread changed it meanwhile.

    Raises:
        RuntimeError: it changed during ten reads in a row (the beat is skipped: the last
            one stands).
    """
    for _ in range(9):
        try:
            return [str(run) for run in active()]
        except RuntimeError:  # "dictionary changed size during iteration"
            continue
    return [str(run) for run in active()]


def _connect(url: str) -> Connection[TupleRow]:
    from psycopg import Connection

    return Connection.connect(url, autocommit=True, connect_timeout=10)


def _errors() -> tuple[type[BaseException], ...]:
    import psycopg

    return (psycopg.Error, OSError)
