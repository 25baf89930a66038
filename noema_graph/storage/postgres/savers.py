"""The project's PostgreSQL checkpoint savers, opened by :mod:`noema_graph.storage.backends`.

They are LangGraph's ``PostgresSaver`` and ``AsyncPostgresSaver`` (same tables, same rows:
stock savers and servers read them unchanged) that also write each checkpoint's run summary
into its metadata, as the SQLite savers do (:func:`noema_graph.storage.sqlite.savers.with_summary`):
``noema_graph.storage.inspect`` then lists PostgreSQL threads without decoding a blob, with the same
statuses as on SQLite, a thread whose writing process died mid-run listed as failed.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from noema_graph.storage.sqlite.savers import with_summary

OUTPUT_WRITE_SQL = (
    "SELECT type, blob FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s "
    "AND checkpoint_id = %s AND channel = 'output' ORDER BY idx DESC LIMIT 1"
)
"""The output contract written in the step a new checkpoint closes (a delta channel: the
checkpoint does not hold it, the step's write does)."""


def _step_key(config: RunnableConfig, new_versions: ChannelVersions) -> tuple[str, str, str] | None:
    """Return the checkpoint whose step wrote ``output`` (None when it wrote none)."""
    conf = config.get("configurable") or {}
    if "output" not in new_versions or not conf.get("checkpoint_id"):
        return None
    return str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")), str(conf["checkpoint_id"])


class NoemaPostgresSaver(PostgresSaver):
    """``PostgresSaver`` that writes the run summary into each checkpoint's metadata."""

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save ``checkpoint`` with its run summary in the metadata."""
        output = None
        if (key := _step_key(config, new_versions)) is not None:
            with self._cursor() as cur:
                row = cur.execute(OUTPUT_WRITE_SQL, key).fetchone()
            output = None if row is None else self.serde.loads_typed((row["type"], row["blob"]))
        summary = with_summary(metadata, checkpoint, output)
        return super().put(config, checkpoint, summary, new_versions)


class NoemaAsyncPostgresSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` that writes the run summary into each checkpoint's metadata."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save ``checkpoint`` with its run summary in the metadata."""
        output = None
        if (key := _step_key(config, new_versions)) is not None:
            async with self._cursor() as cur:
                await cur.execute(OUTPUT_WRITE_SQL, key)
                row = await cur.fetchone()
            output = None if row is None else self.serde.loads_typed((row["type"], row["blob"]))
        summary = with_summary(metadata, checkpoint, output)
        return await super().aput(config, checkpoint, summary, new_versions)
