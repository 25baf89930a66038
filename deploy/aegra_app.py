"""Aegra's custom app for noema-graph: the allow-list serializer, and runs that end.

Aegra loads it through its config's ``http.app`` (``deploy/aegra_config.py`` writes that
config from ``langgraph.json``; ``deploy/serve.sh`` runs both). It adds no route: its
lifespan runs inside Aegra's own, after the database is set up and before the first request,
and

- gives the checkpointer Aegra opened noema's serializer
  (:func:`noema_graph.persistence.serializer`): checkpoints are written and read back with
  the allow-list the CLI and ``open_backend()`` use, instead of LangGraph's default, which
  revives any class it is told to;
- runs a :class:`noema_graph.server_runs.Heartbeat`: this server's runs are listed in the
  database every few seconds, and the runs of a server that stopped beating are marked
  ``error`` (with a message saying how to resume them) within ``NOEMA_SERVER_TTL_S`` plus
  one heartbeat (12 s by default). In Aegra's Redis mode (``REDIS_BROKER_ENABLED=true``)
  the heartbeat is off: queued runs wait there without a server, and Aegra's own lease
  reaper re-queues the runs of a dead worker.

Aegra itself is not patched: this module uses its configuration hook and reads two of its
objects (the database manager's checkpointer and the registry of runs in progress).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aegra_api.core.active_runs import active_runs
from aegra_api.core.database import db_manager
from aegra_api.settings import settings
from fastapi import FastAPI

from noema_graph.persistence import serializer
from noema_graph.server_runs import Heartbeat, Timing


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    """Use noema's serializer; beat (and reap dead servers' runs) while the server lives."""
    db_manager.get_checkpointer().serde = serializer()
    if settings.redis.REDIS_BROKER_ENABLED:  # Aegra's lease reaper re-queues dead workers' runs
        yield
        return
    timing = Timing.from_env(os.environ)
    with Heartbeat(settings.db.database_url_sync, active=lambda: tuple(active_runs), timing=timing):
        yield


app = FastAPI(lifespan=lifespan)
