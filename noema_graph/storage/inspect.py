"""Read threads and checkpoints quickly: list runs, a run's timeline, one decoded state.

``threads(db)`` lists every thread in a checkpoint store, ``history(db, thread_id)`` lists one
thread's checkpoints and ``checkpoint(db, thread_id, checkpoint_id)`` decodes the full state
at one of them (its ``__checkpoint__`` names the SQLite file's format, ``"stock"`` or
``"compact"``: :func:`storage_format`). ``db`` is a SQLite file path, a database URL
(``sqlite:///FILE`` or ``postgresql://...``) or an open saver. On a SQLite file, a
:class:`~langgraph.checkpoint.sqlite.SqliteSaver` or a PostgreSQL URL the listings read the
``checkpoints`` table with SQL and use the run summary each checkpoint's metadata holds
(decoding only the small blob of a checkpoint without one); the message and trace deltas are
never replayed. Any other saver is read through its ``list()`` API. ``athreads``,
``ahistory`` and ``acheckpoint`` do the same on an ``AsyncSqliteSaver`` (SQL through
aiosqlite) or ``alist()``. On every backend a failed run is listed with its error code and
message (the output contract is read from the thread's writes when no summary holds it).

``fork`` and ``replay_from`` wrap LangGraph's time travel: a fork is a new checkpoint on the
same thread whose parent is the chosen one (the original history is untouched); a replay
resumes from a checkpoint, so tool calls completed before it are not run again.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple, DeltaChannelHistory
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from noema_graph.errors import ConfigurationError, NotFound
from noema_graph.state.agent import replayed
from noema_graph.storage.postgres import inspect as pg_inspect
from noema_graph.storage.sqlite import liveness
from noema_graph.storage.sqlite.damage import decoding_row, file_of
from noema_graph.storage.sqlite.format import Format, file_format
from noema_graph.storage.sqlite.persistence import DELTA_CHANNELS, sqlite_checkpointer
from noema_graph.storage.summary import SUMMARY_KEY, RunSummary, run_summary
from noema_graph.storage.urls import backend_kind, sqlite_path

if TYPE_CHECKING:
    from langgraph.pregel import Pregel

Status = Literal["running", "paused", "done", "failed"]
INTERRUPT = "__interrupt__"
RECIPE_KEY = "noema_cli_recipe"  # the CLI's run recipe in checkpoint metadata (cli_runs)

__all__ = [
    "CheckpointRow",
    "ThreadRow",
    "acheckpoint",
    "ahistory",
    "athreads",
    "checkpoint",
    "fork",
    "history",
    "replay_from",
    "run_summary",
    "storage_format",
    "threads",
]


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """One thread (one run, or a run and its resumes) in a checkpoint store.

    ``status`` is ``paused`` when the latest checkpoint has a pending interrupt, ``done`` or
    ``failed`` once ``finalize`` wrote an output (failed when that output has an error) or
    when the process that wrote the latest checkpoint ended without finishing (same host,
    pid gone or reused: see :mod:`noema_graph.storage.sqlite.liveness`; ``resume`` can continue it),
    and
    ``running`` otherwise: a live run, or one on another host.
    """

    thread_id: str
    agent: str | None
    status: Status
    created: str
    updated: str
    iterations: int
    tokens: int
    cost: float | None
    last_error: str | None

    def to_dict(self) -> dict[str, object]:
        """Return the row as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    """One checkpoint of a thread: where the run was when LangGraph saved it."""

    checkpoint_id: str
    parent_id: str | None
    step: int
    source: str
    node: str | None
    iteration: int
    time: str
    plan_step: str | None
    tokens: int
    has_interrupt: bool

    def to_dict(self) -> dict[str, object]:
        """Return the row as a JSON-ready dict."""
        return asdict(self)


Source = str | Path | BaseCheckpointSaver[Any]


def threads(source: Source) -> list[ThreadRow]:
    """List every thread in a checkpoint store, newest first.

    Args:
        source: A SQLite file path, a database URL (``sqlite:///...``, ``postgresql://...``;
            fast path: SQL over the latest checkpoint per thread), an open ``SqliteSaver``
            (the same) or any other ``BaseCheckpointSaver`` (read via ``list()``).

    Returns:
        One row per thread, sorted by last update, newest first.
    """
    if isinstance(source, str | Path):
        if backend_kind(source) == "postgres":
            with pg_inspect.open_reader(str(source)) as reader:
                return _newest_first(_pg_threads(reader))
        with sqlite_checkpointer(_existing(source)) as saver:
            return threads(saver)
    if isinstance(source, SqliteSaver):
        return _newest_first(_sql_threads(source))
    newest, first = _newest(source.list(None))
    outputs = {
        thread_id: _written_output(source, item)
        for thread_id, item in newest.items()
        if _wants_output(item)
    }
    return _newest_first(_list_threads(newest, first, outputs))


def history(source: Source, thread_id: str) -> list[CheckpointRow]:
    """List one thread's checkpoints, oldest first, without replaying messages or trace.

    Args:
        source: A SQLite file path, a database URL, a ``SqliteSaver`` or any
            ``BaseCheckpointSaver``.
        thread_id: The thread to read.

    Returns:
        One row per checkpoint of the root graph (subgraph checkpoints are left out); an empty
        list when the thread does not exist.
    """
    if isinstance(source, str | Path):
        if backend_kind(source) == "postgres":
            with pg_inspect.open_reader(str(source)) as reader:
                return _pg_history(reader, thread_id)
        with sqlite_checkpointer(_existing(source)) as saver:
            return history(saver, thread_id)
    if isinstance(source, SqliteSaver):
        return _sql_history(source, thread_id)
    found = source.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    rows = [_row_from_tuple(item) for item in found]
    return sorted(rows, key=lambda row: row.checkpoint_id)


def checkpoint(
    source: Source, thread_id: str, checkpoint_id: str | None = None
) -> dict[str, object]:
    """Return the full state of ``thread_id`` at ``checkpoint_id`` (the latest when None).

    The state is decoded the way LangGraph resumes it (message and trace deltas replayed), with
    ``__checkpoint__`` (id, parent, step, time, metadata) and ``__interrupts__`` (the values of
    pending interrupts) added.

    Raises:
        KeyError: No such thread or checkpoint.
    """
    if isinstance(source, str | Path):
        if backend_kind(source) == "postgres":
            with pg_inspect.open_reader(str(source)) as reader:
                return checkpoint(reader.saver, thread_id, checkpoint_id)
        with sqlite_checkpointer(_existing(source)) as saver:
            return checkpoint(saver, thread_id, checkpoint_id)
    found = source.get_tuple(_config(thread_id, checkpoint_id))
    if found is None:
        raise NotFound(_missing(thread_id, checkpoint_id))
    history = source.get_delta_channel_history(config=found.config, channels=list(DELTA_CHANNELS))
    return _state(found, history, storage_format(source))


async def athreads(saver: Source) -> list[ThreadRow]:
    """Async :func:`threads`: SQL on an ``AsyncSqliteSaver``, ``alist()`` on any other saver.

    A path or URL is read by :func:`threads` in a worker thread.
    """
    if isinstance(saver, str | Path):
        return await asyncio.to_thread(threads, saver)
    if isinstance(saver, AsyncSqliteSaver):
        return _newest_first(await _asql_threads(saver))
    newest, first = _newest([item async for item in saver.alist(None)])
    outputs = {
        thread_id: await _awritten_output(saver, item)
        for thread_id, item in newest.items()
        if _wants_output(item)
    }
    return _newest_first(_list_threads(newest, first, outputs))


async def ahistory(saver: Source, thread_id: str) -> list[CheckpointRow]:
    """Async :func:`history`: SQL on an ``AsyncSqliteSaver``, ``alist()`` on any other saver.

    A path or URL is read by :func:`history` in a worker thread.
    """
    if isinstance(saver, str | Path):
        return await asyncio.to_thread(history, saver, thread_id)
    if isinstance(saver, AsyncSqliteSaver):
        return await _asql_history(saver, thread_id)
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    rows = [_row_from_tuple(item) async for item in saver.alist(config)]
    return sorted(rows, key=lambda row: row.checkpoint_id)


async def acheckpoint(
    saver: Source, thread_id: str, checkpoint_id: str | None = None
) -> dict[str, object]:
    """Async :func:`checkpoint` (a path or URL is read by it in a worker thread).

    Raises:
        KeyError: No such thread or checkpoint.
    """
    if isinstance(saver, str | Path):
        return await asyncio.to_thread(checkpoint, saver, thread_id, checkpoint_id)
    found = await saver.aget_tuple(_config(thread_id, checkpoint_id))
    if found is None:
        raise NotFound(_missing(thread_id, checkpoint_id))
    history = await saver.aget_delta_channel_history(
        config=found.config, channels=list(DELTA_CHANNELS)
    )
    return _state(found, history, storage_format(saver))


def fork(
    graph: Pregel[Any, Any],
    config: RunnableConfig,
    checkpoint_id: str,
    *,
    update: Mapping[str, object] | None = None,
    as_node: str | None = None,
) -> RunnableConfig:
    """Branch ``config``'s thread at ``checkpoint_id``; return the new branch's config.

    The fork is a new checkpoint whose parent is ``checkpoint_id`` (with ``update`` applied
    through the graph's reducers, as if ``as_node`` had written it). Checkpoints already saved,
    including later ones on the original branch, are never changed. Invoke the graph with the
    returned config and ``None`` as input to continue the fork.
    """
    at = _at(config, checkpoint_id)
    if graph.checkpointer is None or not isinstance(graph.checkpointer, BaseCheckpointSaver):
        raise ConfigurationError("graph", "has no checkpointer", fix="compile it with one")
    if graph.checkpointer.get_tuple(at) is None:
        raise NotFound(f"no checkpoint {checkpoint_id!r} in thread {_thread(config)!r}")
    # update_state runs the routers of ``as_node`` outside a run: they use the default context
    return graph.update_state(at, dict(update or {}), as_node=as_node)


def replay_from(
    graph: Pregel[Any, Any], config: RunnableConfig, checkpoint_id: str
) -> dict[str, object]:
    """Resume ``config``'s thread from ``checkpoint_id``; return the final state.

    LangGraph re-executes only the steps after the checkpoint: tool calls whose results it
    already holds are not run again. The replay writes a new branch on the same thread.
    """
    return cast(dict[str, object], graph.invoke(None, _at(config, checkpoint_id)))


# --- fast path: SQL over SqliteSaver's tables --------------------------------------------


THREADS_SQL = (
    "SELECT c.thread_id, c.checkpoint_id, c.type, c.checkpoint, c.metadata, f.first_id "
    "FROM checkpoints c JOIN ("
    "  SELECT thread_id, MAX(checkpoint_id) AS last_id, MIN(checkpoint_id) AS first_id"
    "  FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id"
    ") f ON c.thread_id = f.thread_id AND c.checkpoint_id = f.last_id "
    "WHERE c.checkpoint_ns = ''"
)
PAUSED_SQL = (
    "SELECT DISTINCT thread_id, checkpoint_id FROM writes WHERE checkpoint_ns = '' AND channel = ?"
)
HISTORY_SQL = (
    "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata "
    "FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id"
)
PAUSED_IN_THREAD_SQL = (
    "SELECT DISTINCT thread_id, checkpoint_id FROM writes "
    "WHERE thread_id = ? AND checkpoint_ns = '' AND channel = ?"
)
Rows = Sequence[Sequence[Any]]  # sqlite3 rows: the columns' types are the SQL's


def _sql_threads(saver: SqliteSaver) -> list[ThreadRow]:
    latest = saver.conn.execute(THREADS_SQL).fetchall()
    paused = saver.conn.execute(PAUSED_SQL, (INTERRUPT,)).fetchall()
    return _threads_from(saver.serde, latest, paused, path=file_of(saver))


async def _asql_threads(saver: AsyncSqliteSaver) -> list[ThreadRow]:
    async with saver.conn.execute(THREADS_SQL) as cursor:
        latest = await cursor.fetchall()
    async with saver.conn.execute(PAUSED_SQL, (INTERRUPT,)) as cursor:
        paused = await cursor.fetchall()
    return _threads_from(saver.serde, list(latest), list(paused), path=file_of(saver))


def _sql_history(saver: SqliteSaver, thread_id: str) -> list[CheckpointRow]:
    found = saver.conn.execute(HISTORY_SQL, (thread_id,)).fetchall()
    paused = saver.conn.execute(PAUSED_IN_THREAD_SQL, (thread_id, INTERRUPT)).fetchall()
    return _history_from(saver.serde, found, paused, at=(file_of(saver), thread_id))


async def _asql_history(saver: AsyncSqliteSaver, thread_id: str) -> list[CheckpointRow]:
    async with saver.conn.execute(HISTORY_SQL, (thread_id,)) as cursor:
        found = await cursor.fetchall()
    async with saver.conn.execute(PAUSED_IN_THREAD_SQL, (thread_id, INTERRUPT)) as cursor:
        paused = await cursor.fetchall()
    return _history_from(saver.serde, list(found), list(paused), at=(file_of(saver), thread_id))


def _threads_from(
    serde: SerializerProtocol, latest: Rows, paused_rows: Rows, *, path: Path | None
) -> list[ThreadRow]:
    paused = {(row[0], row[1]) for row in paused_rows}
    rows: list[ThreadRow] = []
    for thread_id, checkpoint_id, kind, blob, raw_metadata, first_id in latest:
        with decoding_row(path, thread_id, checkpoint_id):  # a damaged row names itself
            metadata = _metadata(raw_metadata)
            decoded = _decode(serde, kind, blob, metadata)
        rows.append(
            _thread_row(
                thread_id,
                cast(dict[str, object], decoded.get("channel_values", {})),
                metadata,
                created=_uuid_time(first_id),
                updated=_uuid_time(checkpoint_id),
                paused=(thread_id, checkpoint_id) in paused,
            )
        )
    return rows


def _history_from(
    serde: SerializerProtocol, found: Rows, paused_rows: Rows, *, at: tuple[Path | None, str]
) -> list[CheckpointRow]:
    paused = {row[1] for row in paused_rows}
    rows: list[CheckpointRow] = []
    for checkpoint_id, parent_id, kind, blob, raw_metadata in found:
        with decoding_row(*at, checkpoint_id):  # a damaged row names itself
            metadata = _metadata(raw_metadata)
            decoded = _decode(serde, kind, blob, metadata)
        rows.append(
            _checkpoint_row(
                checkpoint_id, parent_id, decoded, metadata, has_interrupt=checkpoint_id in paused
            )
        )
    return rows


def _decode(
    serde: SerializerProtocol, kind: str, blob: bytes, metadata: Mapping[str, object]
) -> dict[str, object]:
    """Decode a checkpoint blob, unless its metadata already carries the run summary."""
    if isinstance(metadata.get(SUMMARY_KEY), Mapping):
        return {}
    return cast(dict[str, object], serde.loads_typed((kind, blob)))


def _metadata(raw: bytes | str | None) -> dict[str, object]:
    if not raw:
        return {}
    return cast(dict[str, object], json.loads(raw))


# --- any saver: BaseCheckpointSaver.list ---------------------------------------------------


def _newest(items: Iterable[CheckpointTuple]) -> tuple[dict[str, CheckpointTuple], dict[str, str]]:
    """Return each thread's newest root checkpoint and the id of its first one."""
    newest: dict[str, CheckpointTuple] = {}
    first: dict[str, str] = {}
    for item in items:
        configurable = item.config.get("configurable", {})
        if configurable.get("checkpoint_ns", ""):
            continue
        thread_id = str(configurable["thread_id"])
        checkpoint_id = item.checkpoint["id"]
        if thread_id not in newest or checkpoint_id > newest[thread_id].checkpoint["id"]:
            newest[thread_id] = item
        if thread_id not in first or checkpoint_id < first[thread_id]:
            first[thread_id] = checkpoint_id
    return newest, first


def _list_threads(
    newest: Mapping[str, CheckpointTuple], first: Mapping[str, str], outputs: Mapping[str, object]
) -> list[ThreadRow]:
    return [
        _thread_row(
            thread_id,
            _with_output(item, outputs.get(thread_id)),
            dict(item.metadata or {}),
            created=_uuid_time(first[thread_id]),
            updated=_uuid_time(item.checkpoint["id"]),
            paused=any(channel == INTERRUPT for _, channel, _ in item.pending_writes or []),
        )
        for thread_id, item in newest.items()
    ]


def _wants_output(item: CheckpointTuple) -> bool:
    """Whether listing ``item`` needs the output contract its checkpoint does not hold.

    ``output`` is a delta channel: after ``finalize`` the checkpoint holds only finalize's
    outcome (the error code), the contract (code and message) is a write. Checkpoints whose
    metadata carries the run summary need nothing more.
    """
    values = item.checkpoint.get("channel_values", {})
    return (
        not isinstance((item.metadata or {}).get(SUMMARY_KEY), Mapping)
        and "output" not in values
        and getattr(values.get("outcome"), "node", None) == "finalize"
    )


def _written_output(saver: BaseCheckpointSaver[Any], item: CheckpointTuple) -> Any:
    """Return the output contract of ``item``'s thread as of ``item`` (from its writes)."""
    found = saver.get_delta_channel_history(config=item.config, channels=["output"])
    return replayed("output", found["output"]) if "output" in found else None


async def _awritten_output(saver: BaseCheckpointSaver[Any], item: CheckpointTuple) -> Any:
    """Async :func:`_written_output`."""
    found = await saver.aget_delta_channel_history(config=item.config, channels=["output"])
    return replayed("output", found["output"]) if "output" in found else None


def _with_output(item: CheckpointTuple, output: object) -> dict[str, object]:
    values = dict(item.checkpoint.get("channel_values", {}))
    if output:
        values["output"] = output
    return values


# --- PostgreSQL: SQL over the checkpoints table's metadata ---------------------------------


def _pg_values(reader: pg_inspect.PostgresReader, thread_id: str, checkpoint_id: str) -> Any:
    """Decode one checkpoint's values (with its output contract) when no summary holds them."""
    item = reader.saver.get_tuple(_config(thread_id, checkpoint_id))
    if item is None:  # deleted since the listing's query
        return {}
    output = _written_output(reader.saver, item) if _wants_output(item) else None
    return {**item.checkpoint, "channel_values": _with_output(item, output)}


def _pg_threads(reader: pg_inspect.PostgresReader) -> list[ThreadRow]:
    rows: list[ThreadRow] = []
    for head in reader.heads(INTERRUPT):
        summarised = isinstance(head.metadata.get(SUMMARY_KEY), Mapping)
        decoded = {} if summarised else _pg_values(reader, head.thread_id, head.checkpoint_id)
        rows.append(
            _thread_row(
                head.thread_id,
                cast(dict[str, object], decoded.get("channel_values", {})),
                head.metadata,
                created=_uuid_time(head.first_id),
                updated=_uuid_time(head.checkpoint_id),
                paused=head.paused,
            )
        )
    return rows


def _pg_history(reader: pg_inspect.PostgresReader, thread_id: str) -> list[CheckpointRow]:
    paused = reader.paused(thread_id, INTERRUPT)
    rows: list[CheckpointRow] = []
    for saved in reader.history(thread_id):
        summarised = isinstance(saved.metadata.get(SUMMARY_KEY), Mapping)
        decoded = (
            {"ts": saved.ts} if summarised else _pg_values(reader, thread_id, saved.checkpoint_id)
        )
        rows.append(
            _checkpoint_row(
                saved.checkpoint_id,
                saved.parent_id,
                decoded,
                saved.metadata,
                has_interrupt=saved.checkpoint_id in paused,
            )
        )
    return rows


def _row_from_tuple(item: CheckpointTuple) -> CheckpointRow:
    return _checkpoint_row(
        item.checkpoint["id"],
        _parent_id(item),
        cast(dict[str, object], item.checkpoint),
        dict(item.metadata or {}),
        has_interrupt=any(channel == INTERRUPT for _, channel, _ in item.pending_writes or []),
    )


# --- rows from decoded values --------------------------------------------------------------


def _summary(values: Mapping[str, object], metadata: Mapping[str, object]) -> RunSummary:
    written = metadata.get(SUMMARY_KEY)
    if isinstance(written, Mapping):
        return cast(RunSummary, written)
    return run_summary(values)


def _thread_row(
    thread_id: str,
    values: Mapping[str, object],
    metadata: Mapping[str, object],
    *,
    created: str,
    updated: str,
    paused: bool,
) -> ThreadRow:
    summary = _summary(values, metadata)
    status = cast(Status, "paused" if paused else summary.get("status", "running"))
    error = summary.get("error")
    writer = summary.get("writer")
    if status == "running" and isinstance(writer, Mapping) and liveness.ended(writer):
        pid = cast(Mapping[str, object], writer).get("pid")
        status, error = "failed", f"process {pid} ended without finishing (killed?)"
    return ThreadRow(
        thread_id=thread_id,
        agent=_agent(metadata),
        status=status,
        created=created,
        updated=updated,
        iterations=int(summary.get("iteration") or 0),
        tokens=int(summary.get("tokens") or 0),
        cost=summary.get("cost"),
        last_error=error,
    )


def _checkpoint_row(
    checkpoint_id: str,
    parent_id: str | None,
    decoded: Mapping[str, object],
    metadata: Mapping[str, object],
    *,
    has_interrupt: bool,
) -> CheckpointRow:
    summary = _summary(cast(Mapping[str, object], decoded.get("channel_values", {})), metadata)
    return CheckpointRow(
        checkpoint_id=checkpoint_id,
        parent_id=parent_id,
        step=int(cast(int, metadata.get("step", -1))),  # CheckpointMetadata.step
        source=str(metadata.get("source", "")),
        node=summary.get("node") if metadata.get("source") == "loop" else None,
        iteration=int(summary.get("iteration") or 0),
        time=str(decoded.get("ts", "")) or _uuid_time(checkpoint_id),
        plan_step=summary.get("plan_step"),
        tokens=int(summary.get("tokens") or 0),
        has_interrupt=has_interrupt,
    )


def _agent(metadata: Mapping[str, object]) -> str | None:
    if isinstance(named := metadata.get("agent"), str):
        return named
    recipe = metadata.get(RECIPE_KEY)
    if isinstance(recipe, str):
        agent = json.loads(recipe).get("agent")
        return agent if isinstance(agent, str) else "default"
    return None


def storage_format(saver: BaseCheckpointSaver[Any]) -> Format | None:
    """Return the format of the SQLite file ``saver`` writes (None: not a SQLite file).

    ``"stock"``: LangGraph's ``SqliteSaver`` reads it; ``"compact"``: only noema's serializer
    does (see :mod:`noema_graph.storage.sqlite.format`).
    """
    compact = getattr(saver, "compact", None)
    if isinstance(compact, bool):  # noema's savers: the format they found and write
        return "compact" if compact else "stock"
    return file_format(saver.conn) if isinstance(saver, SqliteSaver) else None


def _state(
    found: CheckpointTuple,
    history: Mapping[str, DeltaChannelHistory],
    storage: Format | None = None,
) -> dict[str, object]:
    """Decode the whole state: scalar channels, delta channels replayed, checkpoint facts."""
    values = dict(found.checkpoint.get("channel_values", {}))
    for name, entry in history.items():
        values[name] = replayed(name, entry)
    state = {k: v for k, v in values.items() if not k.startswith(("branch:", "__"))}
    metadata = dict(found.metadata or {})
    state["__checkpoint__"] = {
        "checkpoint_id": found.checkpoint["id"],
        "parent_id": _parent_id(found),
        "step": metadata.get("step", -1),
        "time": found.checkpoint["ts"],
        "metadata": metadata,
        "format": storage,
    }
    state["__interrupts__"] = [
        getattr(value, "value", value)
        for _, channel, value in (found.pending_writes or [])
        if channel == INTERRUPT
        for value in (value if isinstance(value, list | tuple) else [value])
    ]
    return state


def _config(thread_id: str, checkpoint_id: str | None) -> RunnableConfig:
    configurable: dict[str, object] = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _missing(thread_id: str, checkpoint_id: str | None) -> str:
    what = f"checkpoint {checkpoint_id!r} of " if checkpoint_id else ""
    return f"no {what}thread {thread_id!r}"


def _parent_id(item: CheckpointTuple) -> str | None:
    if item.parent_config is None:
        return None
    return item.parent_config.get("configurable", {}).get("checkpoint_id")


def _uuid_time(checkpoint_id: str) -> str:
    """Return the time inside a LangGraph checkpoint id (a UUID v6) as ISO 8601 UTC."""
    value = uuid.UUID(checkpoint_id)
    high, mid, low = value.int >> 96, (value.int >> 80) & 0xFFFF, (value.int >> 64) & 0x0FFF
    ticks = (high << 28) | (mid << 12) | low
    seconds = (ticks - 0x01B21DD213814000) / 1e7
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def _thread(config: RunnableConfig) -> str:
    thread_id = config.get("configurable", {}).get("thread_id")
    if not thread_id:
        raise ConfigurationError(
            "config", "has no configurable.thread_id", fix="pass the thread's config"
        )
    return str(thread_id)


def _at(config: RunnableConfig, checkpoint_id: str) -> RunnableConfig:
    configurable = {
        "thread_id": _thread(config),
        "checkpoint_ns": "",
        "checkpoint_id": checkpoint_id,
    }
    return {**config, "configurable": {**config.get("configurable", {}), **configurable}}


def _newest_first(rows: list[ThreadRow]) -> list[ThreadRow]:
    return sorted(rows, key=lambda row: row.updated, reverse=True)


def _existing(source: str | Path) -> Path:
    """Return the SQLite file of a path or ``sqlite:///`` URL; raise when it is missing."""
    path = sqlite_path(source)
    if not path.exists():
        raise ConfigurationError(
            "checkpoint db", f"{path} does not exist", fix="pass --db with an existing file"
        )
    return path
