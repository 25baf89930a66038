"""The Noema learning domain: store, demo data and typed operations for the agents.

* :class:`LearningStore` / :class:`AsyncLearningStore`: a migrated SQLite database (sqlite3 or
  aiosqlite) or PostgreSQL database (psycopg), opened from a path or a URL, running the same
  sans-IO operations.
* :data:`DOMAIN_OPERATIONS`: name -> (input model, function, permission, idempotency,
  description), ready to register as tools.
* :func:`write_demo_data`: a deterministic sample with 60 days of simulated reviews.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.noema.demo import DemoSummary, write_demo_data
    from noema_graph.noema.errors import RecordNotFound, SchemaVersionError, ToolInputError
    from noema_graph.noema.operations import DOMAIN_OPERATIONS, DomainOperation
    from noema_graph.noema.schema import SCHEMA_VERSION
    from noema_graph.noema.store import AsyncLearningStore, LearningStore

__all__ = [
    "DOMAIN_OPERATIONS",
    "SCHEMA_VERSION",
    "AsyncLearningStore",
    "DemoSummary",
    "DomainOperation",
    "LearningStore",
    "RecordNotFound",
    "SchemaVersionError",
    "ToolInputError",
    "write_demo_data",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.noema.demo": ("DemoSummary", "write_demo_data"),
        "noema_graph.noema.errors": ("RecordNotFound", "SchemaVersionError", "ToolInputError"),
        "noema_graph.noema.operations": ("DOMAIN_OPERATIONS", "DomainOperation"),
        "noema_graph.noema.schema": ("SCHEMA_VERSION",),
        "noema_graph.noema.store": ("AsyncLearningStore", "LearningStore"),
    },
)
