"""Domain operations as tools: one :class:`ToolSpec` per operation, bound to a store path.

Each call opens the learning store, runs the operation in one transaction and closes it, so
a tool works from any thread and any event loop (the runner may run it in a worker thread)
and SQLite's WAL mode arbitrates between concurrent agents. Domain input errors become
error observations the model can read; a locked database is a transient failure, retried
for safe and idempotent operations.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from noema_graph.errors import ConfigurationError
from noema_graph.noema.errors import ToolInputError
from noema_graph.noema.operations import DOMAIN_OPERATIONS
from noema_graph.noema.store import LearningStore
from noema_graph.tools import ToolFailure, ToolRegistry, ToolSpec, TransientToolFailure


def _handler(name: str, db: Path) -> Callable[..., Any]:
    def handle(**arguments: Any) -> Any:
        try:
            with LearningStore.open(db) as store:
                return store.call(name, **arguments)
        except ToolInputError as exc:
            raise ToolFailure(
                str(exc), type_="invalid_input", details={"field": exc.field}
            ) from None
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise TransientToolFailure(f"{name}: database busy: {exc}") from None
            raise

    handle.__name__ = name
    handle.__doc__ = DOMAIN_OPERATIONS[name].description
    return handle


def domain_spec(name: str, db: str | Path) -> ToolSpec:
    """Return the tool spec of domain operation ``name`` over the store at ``db``.

    Raises:
        ConfigurationError: ``name`` is not a domain operation.
    """
    if name not in DOMAIN_OPERATIONS:
        raise ConfigurationError(
            "tools", f"no domain operation {name!r}", fix=f"use one of {sorted(DOMAIN_OPERATIONS)}"
        )
    operation = DOMAIN_OPERATIONS[name]
    return ToolSpec(
        name=name,
        description=operation.description,
        input_schema=operation.input_model,
        handler=_handler(name, Path(db)),
        permission=operation.permission,
        idempotency=operation.idempotency,
    )


def domain_registry(db: str | Path, names: Iterable[str] | None = None) -> ToolRegistry:
    """Return a registry of the domain tools ``names`` (None: all) over the store at ``db``."""
    return ToolRegistry(
        domain_spec(name, db) for name in (DOMAIN_OPERATIONS if names is None else names)
    )
