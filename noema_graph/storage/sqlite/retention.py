"""Retention of a SQLite checkpoint file: :func:`prune` old checkpoints, threads and their rows.

A checkpoint goes when it is not among its thread's newest ``keep_last`` or was written
before ``older_than`` ago. A thread that keeps no checkpoint is removed whole: its
checkpoints and writes, its event-log rows and its tool-ledger entries. A thread that keeps
some loses the older ones; its oldest kept checkpoint first gets a full snapshot of the delta
channels (messages, trace, output), which were stored as writes of the checkpoints that go, so every
kept checkpoint can still be loaded and resumed. Event-log rows written before that
checkpoint (except the run's ``agent.*`` lifecycle rows of the runs it keeps) and ledger
entries of tool calls answered before it go too. Everything happens in one transaction;
the file is vacuumed afterwards.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig

# a delta channel's snapshot: LangGraph offers no public class (its own savers import this one)
from langgraph.checkpoint.serde.types import _DeltaSnapshot  # pyright: ignore[reportPrivateUsage] -- no public name yet
from langgraph.checkpoint.sqlite import SqliteSaver

from noema_graph.errors import ConfigurationError
from noema_graph.state.agent import replayed
from noema_graph.storage.side_tables import LEDGER_NAMESPACE, LEDGER_TABLE
from noema_graph.storage.sqlite import eventlog

Key = tuple[str, str, str]
"""A checkpoint: thread id, namespace, checkpoint id."""
LEDGER_PREFIX = ".".join(LEDGER_NAMESPACE)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a prune removes: checkpoints, and the threads that keep none."""

    doomed: list[Key]
    oldest_kept: list[Key]
    dropped_threads: list[str]
    dropped_checkpoints: int
    """Checkpoints of the dropped threads, every namespace."""


def checkpoint_time(checkpoint_id: str) -> datetime:
    """Return when a LangGraph checkpoint id (a UUID v6) was made, in UTC."""
    value = uuid.UUID(checkpoint_id)
    high, mid, low = value.int >> 96, (value.int >> 80) & 0xFFFF, (value.int >> 64) & 0x0FFF
    ticks = (high << 28) | (mid << 12) | low
    return datetime.fromtimestamp((ticks - 0x01B21DD213814000) / 1e7, UTC)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> timedelta:
    """Return the age ``text`` names: a number and a unit s, m, h, d or w (``7d``, ``12h``).

    A bare number is seconds.

    Raises:
        ConfigurationError: ``text`` is not such an age.
    """
    value = text.strip().lower()
    unit = value[-1:] if value[-1:] in _UNITS else "s"
    number = value[:-1] if value[-1:] in _UNITS else value
    try:
        amount = float(number)
    except ValueError:
        raise ConfigurationError(
            "older_than", f"{text!r} is not an age", fix="write it like 7d, 12h, 30m or 3600"
        ) from None
    return cutoff_check(timedelta(seconds=amount * _UNITS[unit]))


def cutoff_check(age: timedelta) -> timedelta:
    """Return ``age``; raise when it is negative."""
    if age < timedelta(0):
        raise ConfigurationError(
            "older_than", f"must not be negative, got {age}", fix="pass an age such as 7d"
        )
    return age


def cutoff_of(older_than: timedelta | float | None, now: datetime | None = None) -> datetime | None:
    """Return the time before which checkpoints go (``older_than`` seconds or a timedelta)."""
    if older_than is None:
        return None
    age = older_than if isinstance(older_than, timedelta) else timedelta(seconds=older_than)
    return (now or datetime.now(UTC)) - cutoff_check(age)


def plan(rows: Iterable[Sequence[str]], *, keep_last: int | None, cutoff: datetime | None) -> Plan:
    """Decide what goes, from ``(thread_id, checkpoint_ns, checkpoint_id)`` rows."""
    by_chain: dict[tuple[str, str], list[str]] = defaultdict(list)
    for thread_id, ns, checkpoint_id in rows:
        by_chain[(thread_id, ns)].append(checkpoint_id)
    doomed: list[Key] = []
    oldest_kept: list[Key] = []
    kept_threads: set[str] = set()
    threads: set[str] = set()
    for (thread_id, ns), ids in by_chain.items():
        threads.add(thread_id)
        ids.sort(reverse=True)  # newest first
        kept = [
            cid
            for rank, cid in enumerate(ids, 1)
            if (keep_last is None or rank <= keep_last)
            and (cutoff is None or checkpoint_time(cid) >= cutoff)
        ]
        keep = set(kept)
        doomed += [(thread_id, ns, cid) for cid in ids if cid not in keep]
        if kept and ns == "":
            kept_threads.add(thread_id)
        if kept and len(kept) < len(ids):
            oldest_kept.append((thread_id, ns, kept[-1]))
    dropped = sorted(threads - kept_threads)
    return Plan(
        dropped_checkpoints=sum(len(ids) for (t, _), ids in by_chain.items() if t in dropped),
        doomed=[k for k in doomed if k[0] not in dropped],
        oldest_kept=[k for k in oldest_kept if k[0] not in dropped],
        dropped_threads=dropped,
    )


def _config(key: Key) -> RunnableConfig:
    thread_id, ns, checkpoint_id = key
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _full_values(saver: SqliteSaver, key: Key, channels: Sequence[str]) -> dict[str, object]:
    """Rebuild every delta channel's value at checkpoint ``key`` (those never written: none)."""
    history = saver.get_delta_channel_history(config=_config(key), channels=list(channels))
    return {
        name: replayed(name, entry)
        for name, entry in history.items()
        if "seed" in entry or entry["writes"]
    }


def snapshot(saver: SqliteSaver, key: Key, channels: Sequence[str]) -> dict[str, object]:
    """Store full values of the delta ``channels`` inside checkpoint ``key``; return its values."""
    conn = saver.conn
    values = _full_values(saver, key, channels)
    row = conn.execute(
        "SELECT type, checkpoint FROM checkpoints WHERE thread_id=? AND checkpoint_ns=? "
        "AND checkpoint_id=?",
        key,
    ).fetchone()
    checkpoint = saver.serde.loads_typed((row[0], row[1]))
    stored = checkpoint["channel_values"]
    for name, value in values.items():
        if name not in stored:  # a value the blob holds already is the one at this checkpoint
            stored[name] = _DeltaSnapshot(value)
    kind, blob = saver.serde.dumps_typed(checkpoint)
    conn.execute(
        "UPDATE checkpoints SET type=?, checkpoint=? WHERE thread_id=? AND checkpoint_ns=? "
        "AND checkpoint_id=?",
        (kind, blob, *key),
    )
    return {**stored, **values}


def answered_calls(saver: SqliteSaver, keys: Sequence[Key]) -> dict[str, set[str]]:
    """Return, per thread, the ids of tool calls answered in the writes of checkpoints ``keys``."""
    found: dict[str, set[str]] = defaultdict(set)
    for key in keys:
        rows = saver.conn.execute(
            "SELECT type, value FROM writes WHERE thread_id=? AND checkpoint_ns=? "
            "AND checkpoint_id=? AND channel='messages'",
            key,
        )
        for kind, blob in rows:
            value = saver.serde.loads_typed((kind, blob))
            for message in value if isinstance(value, list) else [value]:
                if isinstance(message, ToolMessage):
                    found[key[0]].add(str(message.tool_call_id))
    return found


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
    return found.fetchone() is not None


def drop_ledger(conn: sqlite3.Connection, thread_id: str, call_ids: Iterable[str] | None) -> int:
    """Delete ``thread_id``'s tool-ledger entries (only ``call_ids`` when given).

    Both places the ledger has lived: its table, and the Store items of older files.
    """
    removed = 0
    places = [(LEDGER_TABLE, "thread_id", "call_id", thread_id)]
    places.append(("store", "prefix", "key", f"{LEDGER_PREFIX}.{thread_id}"))
    for table, owner, key, value in places:
        if not _has_table(conn, table):
            continue
        if call_ids is None:
            removed += conn.execute(f"DELETE FROM {table} WHERE {owner}=?", (value,)).rowcount
            continue
        ids = list(call_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            removed += conn.execute(
                f"DELETE FROM {table} WHERE {owner}=? AND {key} IN ({','.join('?' * len(chunk))})",
                (value, *chunk),
            ).rowcount
    return removed


def drop_thread(conn: sqlite3.Connection, thread_id: str) -> None:
    """Delete every row of ``thread_id``: checkpoints, writes, events, ledger entries."""
    conn.execute("DELETE FROM checkpoints WHERE thread_id=?", (thread_id,))
    conn.execute("DELETE FROM writes WHERE thread_id=?", (thread_id,))
    eventlog.drop_events(conn, thread_id=thread_id)
    drop_ledger(conn, thread_id, None)


def apply(saver: SqliteSaver, decided: Plan, channels: Sequence[str]) -> None:
    """Carry out ``decided`` in the caller's transaction."""
    conn = saver.conn
    answered = answered_calls(saver, decided.doomed)
    for key in decided.oldest_kept:
        values = snapshot(saver, key, channels)
        if key[1] == "":
            run = values.get("run")
            eventlog.prune_events(
                conn,
                thread_id=key[0],
                keep_from_run=getattr(run, "run_id", None),
                before=checkpoint_time(key[2]).isoformat(),
            )
    for table in ("checkpoints", "writes"):
        conn.executemany(
            f"DELETE FROM {table} WHERE thread_id=? AND checkpoint_ns=? AND checkpoint_id=?",
            decided.doomed,
        )
    for thread_id, calls in answered.items():
        drop_ledger(conn, thread_id, calls)
    for thread_id in decided.dropped_threads:
        drop_thread(conn, thread_id)


def check_limits(keep_last: int | None, older_than: timedelta | float | None) -> None:
    """Raise ConfigurationError unless the limits name something to keep."""
    if keep_last is None and older_than is None:
        raise ConfigurationError(
            "prune", "neither keep_last nor older_than given", fix="pass keep_last=N or older_than"
        )
    if keep_last is not None and keep_last < 1:
        raise ConfigurationError(
            "keep_last", f"must be >= 1, got {keep_last}", fix="keep at least the latest checkpoint"
        )
    if older_than is not None:
        cutoff_of(older_than)


def prune_saver(
    saver: SqliteSaver,
    channels: Sequence[str],
    *,
    keep_last: int | None,
    older_than: timedelta | float | None,
    now: datetime | None = None,
) -> Plan:
    """Prune the file behind ``saver`` in one transaction; return what went."""
    check_limits(keep_last, older_than)
    cutoff = cutoff_of(older_than, now)
    conn = saver.conn
    conn.execute("BEGIN IMMEDIATE")  # the saver's own reads below take its lock themselves
    try:
        rows = conn.execute("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints")
        decided = plan(rows.fetchall(), keep_last=keep_last, cutoff=cutoff)
        apply(saver, decided, channels)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return decided
