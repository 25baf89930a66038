"""Domain operations as tools: one :class:`ToolSpec` per operation, bound to a store location.

Each call opens the learning store (a SQLite file or a PostgreSQL URL), runs the operation in
one transaction and closes it, so a tool works from any thread and any event loop (the runner
may run it in a worker thread); SQLite's WAL mode, or PostgreSQL's writer lock, arbitrates
between concurrent agents. Domain input errors become error observations the model can read;
a locked database (or, on PostgreSQL, a lock wait timed out or a lost connection) is a
transient failure, retried for safe and idempotent operations. Results with a compact view in
:data:`~noema_graph.agents.views.AGENT_VIEWS` are returned as that view.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import create_model

from noema_graph.agents.journaling import journaled_call
from noema_graph.agents.views import AGENT_VIEWS
from noema_graph.errors import ConfigurationError
from noema_graph.noema.errors import RecordNotFound, ToolInputError
from noema_graph.noema.location import store_location
from noema_graph.noema.operations import DOMAIN_OPERATIONS
from noema_graph.noema.ops.common import OpInput
from noema_graph.noema.store import LearningStore
from noema_graph.storage.urls import store_errors
from noema_graph.tools import ToolFailure, ToolRegistry, ToolSpec, TransientToolFailure
from noema_graph.tools.injection import InjectedArgs, Supplier
from noema_graph.tools.results import ToolFix


def _transient(exc: BaseException) -> bool:
    """Return whether a database error may pass on a retry (a lock, a lost connection)."""
    if isinstance(exc, sqlite3.OperationalError):
        return "locked" in str(exc) or "busy" in str(exc)
    psycopg = sys.modules.get("psycopg")  # loaded only when a PostgreSQL store was opened
    return psycopg is not None and isinstance(exc, psycopg.OperationalError)


def _handler(name: str, db: str | Path) -> Callable[..., Any]:
    view = AGENT_VIEWS.get(name)

    def handle(**arguments: Any) -> Any:
        try:
            with LearningStore.open(db, pooled=True) as store:
                return journaled_call(store, name, arguments, view)  # journal, dry runs
        except ToolInputError as exc:
            fix = ToolFix.model_validate(exc.fix_call) if exc.fix_call else None
            missing = isinstance(exc, RecordNotFound)
            details = {"field": exc.field, **({"plain": exc.plain} if missing else {})}
            kind = "not_found" if missing else "invalid_input"
            raise ToolFailure(str(exc), type_=kind, details=details, fix=fix) from None
        except store_errors() as exc:
            if _transient(exc):
                raise TransientToolFailure(f"{name}: database busy: {exc}") from None
            raise

    handle.__name__ = name
    handle.__doc__ = DOMAIN_OPERATIONS[name].description
    return handle


def offered_input(name: str, arguments: Iterable[str]) -> type[OpInput]:
    """Return the input model of operation ``name`` cut down to ``arguments``.

    The arguments left out keep their defaults. Offering a small model only the arguments
    its task needs stops it from filling optional ones it has no value for.

    Raises:
        ConfigurationError: An argument is unknown, or a required one is left out.
    """
    model = DOMAIN_OPERATIONS[name].input_model
    keep = set(arguments)
    fields = model.model_fields
    unknown = sorted(keep - fields.keys())
    missing = sorted(n for n, f in fields.items() if f.is_required() and n not in keep)
    if unknown or missing:
        raise ConfigurationError(
            f"tool_arguments[{name!r}]",
            f"unknown arguments {unknown}" if unknown else f"required arguments {missing} left out",
            fix=f"choose among {sorted(fields)}, keeping every required one",
        )
    kept: dict[str, Any] = {n: (f.annotation, f) for n, f in fields.items() if n in keep}
    return create_model(model.__name__, __base__=OpInput, __doc__=model.__doc__, **kept)


def domain_spec(
    name: str,
    db: str | Path,
    arguments: Iterable[str] | None = None,
    owner: Supplier | None = None,
) -> ToolSpec:
    """Return the tool spec of domain operation ``name`` over the store at ``db``.

    Args:
        name: A key of ``DOMAIN_OPERATIONS``.
        db: The learning store.
        arguments: Offer only these arguments (see :func:`offered_input`); None: all.
        owner: Supplies the operation's owner arguments (``user_id``) from the run's learner:
            they are then injected, never offered to the model. None (a plain tool server,
            where the caller is the operator) offers them as ordinary arguments.

    Raises:
        ConfigurationError: ``name`` is not a domain operation, or ``arguments`` is invalid.
    """
    if name not in DOMAIN_OPERATIONS:
        raise ConfigurationError(
            "tools", f"no domain operation {name!r}", fix=f"use one of {sorted(DOMAIN_OPERATIONS)}"
        )
    operation = DOMAIN_OPERATIONS[name]
    fields = operation.owner_fields
    return ToolSpec(
        name=name,
        description=operation.description,
        input_schema=operation.input_model if arguments is None else offered_input(name, arguments),
        handler=_handler(name, store_location(db)),
        permission=operation.permission,
        idempotency=operation.idempotency,
        injected=InjectedArgs(fields, owner) if owner is not None and fields else None,
    )


def domain_registry(
    db: str | Path,
    names: Iterable[str] | None = None,
    arguments: Mapping[str, Iterable[str]] | None = None,
    owner: Supplier | None = None,
) -> ToolRegistry:
    """Return a registry of the domain tools ``names`` (None: all) over the store at ``db``.

    ``arguments`` maps a tool name to the only arguments it offers (see :func:`offered_input`);
    ``owner`` supplies the learner's arguments from the run (see :func:`domain_spec`).
    """
    offered = arguments or {}
    return ToolRegistry(
        domain_spec(name, db, offered.get(name), owner)
        for name in (DOMAIN_OPERATIONS if names is None else names)
    )
