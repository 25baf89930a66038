"""The project's SQLite checkpoint savers, opened by :mod:`noema_graph.storage.sqlite.persistence`.

Both write each checkpoint's run summary into its metadata (``noema_graph.storage.inspect`` then
lists threads without decoding a blob), and both name a damaged file: a read that fails on a
malformed file, or on a row that no longer decodes, raises
:class:`~noema_graph.storage.sqlite.damage.DamagedFileError` with the file, the thread and the fix.
A decode
error is reported as damage only after the thread's rows were checked and one really fails;
otherwise the original error (a bug) is raised unchanged.

Both write the format their serializer writes (stock, or compact: see
:mod:`noema_graph.storage.sqlite.format`), and both resolve the trace writes older compact
files linked to their ToolMessages (:mod:`noema_graph.storage.sqlite.linked_writes`)
whenever writes are read back. Both rebuild delta channels from the thread's rows read once
(:mod:`noema_graph.storage.sqlite.delta`).

The async saver reads through aiosqlite and writes through the file's
:class:`~noema_graph.storage.sqlite.writer.SqliteWriter` (see that module for why).
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, cast

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from noema_graph.storage.sqlite.damage import (
    CHECKPOINT_ROWS_SQL,
    DECODE_ERRORS,
    KEY_COLUMNS,
    WRITE_ROWS_SQL,
    BadRow,
    DamagedFileError,
    bad_rows,
    corrupt_file,
    damaged_row,
    first_bad_row,
    is_corrupt,
    thread_filter,
)
from noema_graph.storage.sqlite.delta import DeltaHistory
from noema_graph.storage.sqlite.linked_writes import resolve
from noema_graph.storage.sqlite.liveness import writer
from noema_graph.storage.sqlite.writer import SqliteWriter, in_transaction
from noema_graph.storage.summary import SUMMARY_KEY, run_summary

DAMAGE_SIGNS: tuple[type[Exception], ...] = (sqlite3.DatabaseError, *DECODE_ERRORS)
"""Errors a read of a damaged file raises (each is checked before it is called damage)."""


def with_summary(
    metadata: CheckpointMetadata, checkpoint: Checkpoint, output: object = None
) -> CheckpointMetadata:
    """Return ``metadata`` with the run summary of ``checkpoint`` (what listing reads).

    ``output`` is the output contract written in the step the checkpoint closes (the
    ``output`` channel is a delta channel: the checkpoint does not hold it). The summary names
    the process that wrote it (:func:`noema_graph.storage.sqlite.liveness.writer`), so a thread
    whose process died mid-run is listed as failed, not running for ever.
    """
    values = checkpoint["channel_values"]
    if output is not None:
        values = {**values, "output": output}
    summary = {**run_summary(values), "writer": writer()}
    return cast(CheckpointMetadata, {**metadata, SUMMARY_KEY: summary})  # an extra key


def thread_of(config: RunnableConfig | None) -> str | None:
    """Return the thread id ``config`` names, if any."""
    if config is None:
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def _damage(
    path: Path | None, exc: Exception, thread: str | None, bad: Callable[[], BadRow | None]
) -> DamagedFileError | None:
    """Return the DamagedFileError ``exc`` stands for, or None when it is not damage."""
    if is_corrupt(exc):
        assert isinstance(exc, sqlite3.DatabaseError)  # is_corrupt checked it
        return corrupt_file(path, exc, thread_id=thread)
    if not isinstance(exc, DECODE_ERRORS):
        return None
    try:
        row = bad()
    except sqlite3.DatabaseError as again:
        return corrupt_file(path, again, thread_id=thread) if is_corrupt(again) else None
    return None if row is None else damaged_row(path, row)


def next_version(current: str | int | None) -> str | int:
    """Return the version after ``current``: a small int (a thread started as strings stays so).

    SQLite stores a checkpoint's channel values inline, not by version, so versions need not
    be unique across forks: LangGraph's ``"<32 digits>.<16 random digits>"`` strings cost
    about 1.6 KB per checkpoint in ``channel_versions`` and ``versions_seen``; ints cost ~60 B.
    """
    if isinstance(current, str):  # written by a stock saver or an older noema_graph
        return f"{int(current.split('.')[0]) + 1:032}.{random.random():016}"
    return (current or 0) + 1


WRITES_DDL = f"""
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY ({", ".join(KEY_COLUMNS["writes"])})
) WITHOUT ROWID
"""
"""LangGraph's ``writes`` table (same columns and key) stored in its key's b-tree.

A rowid table keeps every key twice (the row and its primary-key index): a tenth of a
thread's file. Created before LangGraph's own ``CREATE TABLE IF NOT EXISTS``, so new files get
it and existing files keep theirs; stock savers read and write it unchanged.
"""
OUTPUT_WRITE_SQL = (
    "SELECT type, value FROM writes WHERE thread_id=? AND checkpoint_ns=? AND checkpoint_id=? "
    "AND channel='output' ORDER BY idx DESC LIMIT 1"
)
TASK_MESSAGES_SQL = (
    "SELECT type, value FROM writes WHERE thread_id=? AND task_id=? AND channel='messages'"
)


def _resolved(item: CheckpointTuple | None) -> CheckpointTuple | None:
    """Return ``item`` with its pending writes' linked trace steps resolved."""
    return None if item is None else _resolved_item(item)


def _resolved_item(item: CheckpointTuple) -> CheckpointTuple:
    if not item.pending_writes:
        return item
    return item._replace(pending_writes=resolve(item.pending_writes))


class NoemaSqliteSaver(SqliteSaver):
    """A SqliteSaver that writes run summaries and names damaged files.

    Channel versions are small ints (see :func:`next_version`).
    """

    def get_next_version(self, current: Any, channel: None) -> Any:
        """Return the next channel version (see :func:`next_version`)."""
        return next_version(current)

    def setup(self) -> None:
        """Create the tables (``writes`` without rowid: :data:`WRITES_DDL`)."""
        if not self.is_setup:
            self.conn.execute(WRITES_DDL)
        super().setup()

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        serde: SerializerProtocol | None = None,
        path: Path | None = None,
        compact: bool = False,
    ) -> None:
        """Use ``conn``, the connection to the file at ``path`` (named in damage errors).

        ``compact`` says the file is compact (its serializer writes that format).
        """
        super().__init__(conn, serde=serde)
        self.noema_path = path
        self.compact = compact
        self.delta_history = DeltaHistory(self.serde)

    def _damage(self, exc: Exception, config: RunnableConfig | None) -> DamagedFileError | None:
        thread = thread_of(config)

        def bad() -> BadRow | None:
            with self.lock:
                return first_bad_row(self.conn, self.serde, thread)

        return _damage(self.noema_path, exc, thread, bad)

    @contextmanager
    def _named_damage(self, config: RunnableConfig | None) -> Generator[None]:
        """Turn a read failure that damage explains into DamagedFileError (:func:`_damage`)."""
        try:
            yield
        except DAMAGE_SIGNS as exc:
            if (damage := self._damage(exc, config)) is None:
                raise
            raise damage from exc

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint ``config`` points to (raise DamagedFileError on damage)."""
        with self._named_damage(config):
            return _resolved(super().get_tuple(config))

    def list(self, config: RunnableConfig | None, **options: Any) -> Iterator[CheckpointTuple]:
        """List checkpoints, newest first (raise DamagedFileError on damage).

        ``options`` are SqliteSaver's: ``filter``, ``before``, ``limit``.
        """
        with self._named_damage(config):
            for item in super().list(config, **options):
                yield _resolved_item(item)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return the writes that rebuild ``channels`` (raise DamagedFileError on damage).

        Answered from the thread's rows read once (:class:`DeltaHistory`), so listing a
        thread's states decodes each row once.
        """
        with self._named_damage(config):
            found = self._cached_history(config, channels)
            if found is not None:
                return found
            history = super().get_delta_channel_history(config=config, channels=channels)
            return self.resolve_history(config, history)

    def resolve_history(
        self, config: RunnableConfig, history: Mapping[str, DeltaChannelHistory]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Resolve linked trace steps of LangGraph's answer (messages read by task id)."""
        entry = history.get("trace")
        if entry is None:
            return history
        tasks = {task_id for task_id, _, _ in entry["writes"]}
        thread = thread_of(config)
        companions: list[PendingWrite] = []
        with self.cursor(transaction=False) as cur:
            for task_id in tasks:
                cur.execute(TASK_MESSAGES_SQL, (thread, task_id))
                companions += [
                    (task_id, "messages", self.serde.loads_typed((kind, value)))
                    for kind, value in cur.fetchall()
                ]
        return {**history, "trace": {**entry, "writes": resolve(entry["writes"], companions)}}

    def _cached_history(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> dict[str, DeltaChannelHistory] | None:
        conf = config.get("configurable") or {}
        checkpoint_id = conf.get("checkpoint_id")
        if not channels or not checkpoint_id:
            return None
        with self.lock:
            return self.delta_history.history(
                self.conn,
                thread_id=str(conf["thread_id"]),
                checkpoint_ns=str(conf.get("checkpoint_ns", "")),
                checkpoint_id=str(checkpoint_id),
                channels=channels,
            )

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save ``checkpoint`` with its run summary in the metadata."""
        output = self._written_output(config) if "output" in new_versions else None
        summary = with_summary(metadata, checkpoint, output)
        try:
            return super().put(config, checkpoint, summary, new_versions)
        except sqlite3.DatabaseError as exc:
            if not is_corrupt(exc):
                raise
            raise corrupt_file(self.noema_path, exc, thread_id=thread_of(config)) from exc

    def _written_output(self, config: RunnableConfig) -> object:
        """Return the output contract the step from ``config``'s checkpoint wrote, if any."""
        conf = config.get("configurable") or {}
        if not conf.get("checkpoint_id"):
            return None
        key = (str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")), conf["checkpoint_id"])
        with self.cursor(transaction=False) as cur:
            row = cur.execute(OUTPUT_WRITE_SQL, key).fetchone()
        return None if row is None else self.serde.loads_typed((row[0], row[1]))


class NoemaAsyncSqliteSaver(AsyncSqliteSaver):
    """The async :class:`NoemaSqliteSaver`; it writes through the file's :class:`SqliteWriter`.

    Reads go through aiosqlite; every write (a checkpoint, a task's writes, a thread's
    deletion) runs whole on the writer thread, through a sync ``SqliteSaver`` twin over the
    writer's connection, so no write transaction is held open across an ``await``.
    """

    def __init__(
        self,
        conn: aiosqlite.Connection,
        *,
        serde: JsonPlusSerializer | None = None,
        writer: SqliteWriter | None = None,
        path: Path | None = None,
        compact: bool = False,
    ) -> None:
        """Read through ``conn``; write through ``writer`` (through ``conn`` without one).

        ``compact`` is the sync saver's (the writer's twin writes that way).
        """
        super().__init__(conn, serde=serde)
        self.noema_path = path  # also where the observer opens the event log
        self.writer = writer
        self.compact = compact
        self.twin = (
            None
            if writer is None
            else NoemaSqliteSaver(writer.conn, serde=self.serde, path=path, compact=compact)
        )

    def get_next_version(self, current: Any, channel: None) -> Any:
        """Return the next channel version (see :func:`next_version`)."""
        return next_version(current)

    async def setup(self) -> None:
        """Create the tables as the sync saver does (through the writer's twin, if any)."""
        if self.writer is not None and self.twin is not None:
            if not self.twin.is_setup:
                await self.writer.arun(self.twin.setup)
        elif not self.is_setup:
            await self.conn.execute(WRITES_DDL)
            await self.conn.commit()
        await super().setup()

    async def _adamage(
        self, exc: Exception, config: RunnableConfig | None
    ) -> DamagedFileError | None:
        thread = thread_of(config)
        where, params = thread_filter(thread)
        checkpoints: list[object] = []
        writes: list[object] = []
        if not is_corrupt(exc) and isinstance(exc, DECODE_ERRORS):
            try:
                async with self.conn.execute(CHECKPOINT_ROWS_SQL + where, params) as cursor:
                    checkpoints = list(await cursor.fetchall())
                async with self.conn.execute(WRITE_ROWS_SQL + where, params) as cursor:
                    writes = list(await cursor.fetchall())
            except sqlite3.DatabaseError as again:
                if not is_corrupt(again):
                    return None
                return corrupt_file(self.noema_path, again, thread_id=thread)

        def bad() -> BadRow | None:
            return next(bad_rows(self.serde, checkpoints, writes), None)

        return _damage(self.noema_path, exc, thread, bad)

    @asynccontextmanager
    async def _named_damage(self, config: RunnableConfig | None) -> AsyncGenerator[None]:
        """Turn a read failure that damage explains into DamagedFileError (:func:`_damage`)."""
        try:
            yield
        except DAMAGE_SIGNS as exc:
            if (damage := await self._adamage(exc, config)) is None:
                raise
            raise damage from exc

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint ``config`` points to (raise DamagedFileError on damage)."""
        async with self._named_damage(config):
            return _resolved(await super().aget_tuple(config))

    async def alist(
        self, config: RunnableConfig | None, **options: Any
    ) -> AsyncIterator[CheckpointTuple]:
        """List checkpoints, newest first (raise DamagedFileError on damage).

        ``options`` are AsyncSqliteSaver's: ``filter``, ``before``, ``limit``.
        """
        async with self._named_damage(config):
            async for item in super().alist(config, **options):
                yield _resolved_item(item)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Return the writes that rebuild ``channels`` (raise DamagedFileError on damage).

        With a writer, answered by the writer's sync twin (its cache, on its thread).
        """
        async with self._named_damage(config):
            if self.writer is not None and self.twin is not None:
                twin = self.twin
                return await self.writer.arun(
                    lambda: twin.get_delta_channel_history(config=config, channels=channels)
                )
            return await super().aget_delta_channel_history(config=config, channels=channels)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save ``checkpoint`` with its run summary in the metadata."""
        if self.writer is None or self.twin is None:
            summary = with_summary(metadata, checkpoint)
            return await super().aput(config, checkpoint, summary, new_versions)
        twin = self.twin  # adds the summary itself
        return await self.writer.arun(lambda: twin.put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's writes, all of them or none."""
        if self.writer is None or self.twin is None:
            return await super().aput_writes(config, writes, task_id, task_path)
        twin, conn = self.twin, self.writer.conn

        def put() -> None:
            twin.put_writes(config, writes, task_id, task_path)

        await self.writer.arun(lambda: in_transaction(conn, put))
        return None

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes in one transaction."""
        if self.writer is None or self.twin is None:
            return await super().adelete_thread(thread_id)
        twin, conn = self.twin, self.writer.conn
        await self.writer.arun(lambda: in_transaction(conn, lambda: twin.delete_thread(thread_id)))
        return None
