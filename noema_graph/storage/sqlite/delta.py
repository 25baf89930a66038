"""Rebuild delta channels from a thread's writes read once, for the SQLite savers.

A :class:`~langgraph.channels.delta.DeltaChannel` stores only new entries in each checkpoint;
its value at a checkpoint is the nearest ancestor snapshot plus every write in between.
The project's channels never snapshot (see ``noema_graph.state.agent.SNAPSHOT_FREQUENCY``),
so LangGraph's own ``SqliteSaver.get_delta_channel_history`` would decode every ancestor
checkpoint and fetch every ancestor write for each checkpoint it rebuilds: quadratic work
for ``get_state_history``. :class:`DeltaHistory` reads the thread's checkpoint parents and
delta-channel writes in two queries, decodes each row at most once, and answers every
checkpoint of the thread from that, while the file is unchanged (SQLite's
``data_version`` and the connection's change count both say so).

Trace steps linked to their ToolMessages (:mod:`noema_graph.storage.sqlite.linked_writes`) are
resolved.
Otherwise the answers are those of LangGraph's implementation: the same seed (nearest ancestor whose
blob holds the channel) and the same writes, oldest first and in ``writes_sort_key`` order
within a checkpoint.
"""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

from langgraph.checkpoint.base import DeltaChannelHistory, PendingWrite, writes_sort_key
from langgraph.checkpoint.serde.base import SerializerProtocol

from noema_graph.storage.sqlite.linked_writes import resolve

_CHECKPOINTS_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints "
    "WHERE thread_id = ? AND checkpoint_ns = ?"
)
_WRITES_SQL = (
    "SELECT checkpoint_id, channel, task_id, idx, type, value, task_path FROM writes "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND channel IN ({})"
)
Key = tuple[str, str, tuple[str, ...]]
"""A thread, its namespace and the channels asked for."""


@dataclass
class _Thread:
    """One thread's rows as read, and what was decoded of them so far."""

    token: tuple[int, int]
    parents: dict[str, str | None]
    blobs: dict[str, tuple[str, bytes]]
    raw_writes: dict[str, dict[str, list[tuple[str, str, int, str, bytes]]]]
    seeds: dict[str, dict[str, object]] = field(default_factory=dict[str, dict[str, object]])
    writes: dict[tuple[str, str], list[PendingWrite]] = field(
        default_factory=dict[tuple[str, str], list[PendingWrite]]
    )


class DeltaHistory:
    """Answer ``get_delta_channel_history`` for the latest thread asked about, from a cache."""

    def __init__(self, serde: SerializerProtocol) -> None:
        """Decode rows with ``serde`` (the saver's)."""
        self.serde = serde
        self._key: Key | None = None
        self._thread: _Thread | None = None

    def history(
        self,
        conn: sqlite3.Connection,
        *,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        channels: Sequence[str],
    ) -> dict[str, DeltaChannelHistory] | None:
        """Return each channel's seed and writes before ``checkpoint_id``; None if unknown.

        The caller holds the connection (the saver's lock) for the whole call.
        """
        key: Key = (thread_id, checkpoint_ns, tuple(sorted(channels)))
        token = _token(conn)
        thread = self._thread
        if thread is None or self._key != key or thread.token != token:
            thread = self._load(conn, key, token)
            self._key, self._thread = key, thread
        if checkpoint_id not in thread.parents:
            return None
        return self._walk(thread, checkpoint_id, list(channels))

    def _load(self, conn: sqlite3.Connection, key: Key, token: tuple[int, int]) -> _Thread:
        thread_id, ns, channels = key
        parents: dict[str, str | None] = {}
        blobs: dict[str, tuple[str, bytes]] = {}
        for cid, parent, kind, blob in conn.execute(_CHECKPOINTS_SQL, (thread_id, ns)):
            parents[cid] = parent
            blobs[cid] = (kind, blob)
        raw: dict[str, dict[str, list[tuple[str, str, int, str, bytes]]]] = {}
        wanted = sorted({*channels, "messages"})  # messages resolve linked trace steps
        sql = _WRITES_SQL.format(",".join("?" * len(wanted)))
        for cid, channel, task_id, idx, kind, value, path in conn.execute(
            sql, (thread_id, ns, *wanted)
        ):
            raw.setdefault(cid, {}).setdefault(channel, []).append(
                (path or "", task_id, idx, kind, value)
            )
        return _Thread(token=token, parents=parents, blobs=blobs, raw_writes=raw)

    def _seeds(self, thread: _Thread, cid: str) -> dict[str, object]:
        """Return the values stored in checkpoint ``cid``'s blob (decoded once)."""
        if (found := thread.seeds.get(cid)) is None:
            checkpoint = self.serde.loads_typed(thread.blobs.pop(cid))
            found = dict(checkpoint.get("channel_values") or {})
            thread.seeds[cid] = found
        return found

    def _writes(self, thread: _Thread, cid: str, channel: str) -> list[PendingWrite]:
        """Return checkpoint ``cid``'s writes to ``channel`` in LangGraph's order (decoded once)."""
        key = (cid, channel)
        if (found := thread.writes.get(key)) is None:
            rows = sorted(
                thread.raw_writes.get(cid, {}).get(channel, []),
                key=lambda row: writes_sort_key(row[0], row[1], row[2]),
            )
            found = [
                (task_id, channel, self.serde.loads_typed((kind, value)))
                for _, task_id, _, kind, value in rows
            ]
            if channel == "trace":
                found = resolve(found, self._writes(thread, cid, "messages"))
            thread.writes[key] = found
        return found

    def _walk(
        self, thread: _Thread, target: str, channels: list[str]
    ) -> dict[str, DeltaChannelHistory]:
        """Walk from ``target``'s parent up to each channel's seed, as LangGraph's saver does."""
        chains: dict[str, list[str]] = {ch: [] for ch in channels}
        seeds: dict[str, object] = {}
        active = set(channels)
        walked = {target}
        cid = thread.parents.get(target)
        while cid is not None and active and cid not in walked and cid in thread.parents:
            walked.add(cid)
            for ch in active:
                chains[ch].append(cid)
            stored = self._seeds(thread, cid)
            for ch in [ch for ch in active if ch in stored]:
                seeds[ch] = stored[ch]
                active.discard(ch)
            cid = thread.parents[cid]
        result: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            writes: list[PendingWrite] = []
            for step in reversed(chains[ch]):
                writes.extend(self._writes(thread, step, ch))
            entry: DeltaChannelHistory = {"writes": writes}
            if ch in seeds:
                entry["seed"] = copy.copy(seeds[ch])  # the channel may keep it as its value
            result[ch] = entry
        return result


def _token(conn: sqlite3.Connection) -> tuple[int, int]:
    """Return what changes whenever the file does: by another connection, or by this one."""
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    return int(version), conn.total_changes
