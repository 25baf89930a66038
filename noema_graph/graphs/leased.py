"""A compiled noema graph whose every run of a thread holds the thread's lease.

``invoke`` and ``ainvoke`` run through ``stream`` and ``astream``, so overriding those two
covers every way a compiled graph runs (``stream_events`` included). A run takes no lease
when it has no checkpointer or no ``thread_id``, and when it runs as a subgraph of another
run (the parent holds the lease). See :mod:`noema_graph.storage.lease` for the rules.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterator, Mapping, Sized
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import CONFIG_KEYS, var_child_runnable_config
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from noema_graph.storage.lease import Lease, ahold, hold, new_lease, strategy_of
from noema_graph.storage.side_tables import Database, adatabase_of, database_of

logger = logging.getLogger(__name__)
SUBGRAPH_KEYS = ("__pregel_checkpointer", "__pregel_task_id")
"""``configurable`` keys a parent run lends its subgraphs: such a run takes no lease."""
COORDINATE_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
"""``configurable`` keys by which a config addresses its own checkpoints, not its parent's."""


def run_configurable(*configs: RunnableConfig | None) -> dict[str, object]:
    """Return the ``configurable`` a run of ``configs`` sees, merged as LangGraph's Pregel does.

    The ambient run's (a parent node's) ``configurable`` is the base unless a config names a
    checkpoint coordinate of its own (:data:`COORDINATE_KEYS`); each config's ``configurable``
    then lays over it, and a config's keys that are not runnable-config keys join it.
    ``tests/graphs/test_leased.py`` checks this against Pregel's merge.
    """
    ambient = var_child_runnable_config.get() or {}
    merged: dict[str, object] = dict(ambient.get("configurable") or {})
    given = [config for config in configs if config is not None]
    if merged and any(
        _filled((config.get("configurable") or {}).get(key))
        for config in given
        for key in COORDINATE_KEYS
    ):
        merged = {}
    for config in given:
        merged.update(config.get("configurable") or {})
        merged.update({k: v for k, v in config.items() if k not in CONFIG_KEYS and _filled(v)})
    return merged


def _filled(value: object) -> bool:
    """Return whether ``value`` counts as given: not None, and not an empty collection."""
    if isinstance(value, list | tuple | dict):
        return len(cast(Sized, value)) > 0
    return value is not None


class LeasedGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled noema graph: runs of one thread take turns (:mod:`~noema_graph.storage.lease`)."""

    def _leased(self, config: RunnableConfig | None) -> tuple[object, str] | None:
        """Return (checkpointer, thread id) when this run must hold a lease, else None."""
        configurable: Mapping[str, object] = run_configurable(self.config, config)
        strategy_of(configurable)  # an unknown strategy fails every run, leased or not
        if any(key in configurable for key in SUBGRAPH_KEYS) or configurable.get("checkpoint_ns"):
            return None
        thread = configurable.get("thread_id")
        if thread is None or not isinstance(self.checkpointer, BaseCheckpointSaver):
            return None
        return self.checkpointer, str(thread)

    def _lease(
        self, database: Database | None, thread: str, config: RunnableConfig | None
    ) -> Lease | None:
        if database is None:
            _unleased(type(self.checkpointer).__name__)
            return None
        configurable = run_configurable(self.config, config)
        return new_lease(database, thread, configurable)

    def stream(  # pyright: ignore[reportIncompatibleMethodOverride] -- forwards every argument
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """Run like LangGraph's ``stream``, holding the thread's lease (see the module)."""
        found = self._leased(config)
        database = None if found is None else database_of(found[0])
        if found is None or (database is not None and database.run is None):
            yield from super().stream(input, config, **kwargs)
            return
        lease = self._lease(database, found[1], config)
        if lease is None:
            yield from super().stream(input, config, **kwargs)
            return
        with hold(lease):
            yield from super().stream(input, config, **kwargs)

    async def astream(  # pyright: ignore[reportIncompatibleMethodOverride] -- forwards every argument
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """Run like LangGraph's ``astream``, holding the thread's lease (see the module)."""
        found = self._leased(config)
        lease = None
        if found is not None:
            lease = self._lease(await adatabase_of(found[0]), found[1], config)
        if lease is None:
            async for item in super().astream(input, config, **kwargs):
                yield item
            return
        async with ahold(lease):
            async for item in super().astream(input, config, **kwargs):
                yield item


@functools.cache
def _unleased(saver: str) -> None:
    logger.warning(
        "checkpointer %s has no database noema can take a thread lease in: concurrent runs "
        "of one thread are not prevented (use SQLite, PostgreSQL or InMemorySaver)",
        saver,
    )


def leased(graph: CompiledStateGraph[Any, Any, Any, Any]) -> LeasedGraph:
    """Return ``graph`` as a :class:`LeasedGraph` (same nodes, channels and settings)."""
    attrs = {k: v for k, v in graph.__dict__.items() if k != "__orig_class__"}
    return LeasedGraph(**attrs)
