"""Database URLs: which backend a URL names, its SQLite file, its redacted form, its errors.

A leaf every layer may import (the tool ledger, the learning store, the event log, the CLI):
it imports no driver. :mod:`noema_graph.storage.backends` opens what a URL names.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from noema_graph.errors import ConfigurationError, NoemaError

DATABASE_URL_ENV = "NOEMA_DATABASE_URL"
"""The environment variable the CLI reads a database URL from."""
BackendKind = Literal["sqlite", "postgres"]
POSTGRES_SCHEMES = ("postgresql", "postgres")
CONNECT_TIMEOUT_S = 10
EVENT_LOG_URL = "noema_url"
"""Attribute naming a PostgreSQL checkpointer's database (``observability.pg_eventlog``)."""
_INSTALL = "pip install 'noema-graph[postgres]'"


class DatabaseUnavailable(NoemaError):
    """The database server could not be reached; the message names it and the fix."""


def backend_kind(url: str | Path) -> BackendKind:
    """Return which backend ``url`` names: a path or ``sqlite:///`` URL, or PostgreSQL.

    Raises:
        ConfigurationError: the URL has another scheme.
    """
    text = str(url)
    if isinstance(url, Path) or "://" not in text or text.startswith("sqlite:///"):
        return "sqlite"
    scheme = text.split("://", 1)[0].lower()
    if scheme in POSTGRES_SCHEMES:
        return "postgres"
    raise ConfigurationError(
        "database url",
        f"unsupported scheme {scheme!r} in {redacted(text)!r}",
        fix="use sqlite:///path/to/file.sqlite or postgresql://user:password@host:5432/dbname",
    )


def redacted(url: str) -> str:
    """Return ``url`` with its password replaced by ``***`` (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def store_errors() -> tuple[type[BaseException], ...]:
    """Return the errors a Store's backend may raise: SQLite's, OS errors, psycopg's.

    psycopg's are included once it is loaded (no PostgreSQL backend was opened otherwise), so
    callers such as the tool ledger pay no import for it.
    """
    found: list[type[BaseException]] = [sqlite3.Error, OSError]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        found.append(psycopg.Error)
    return tuple(found)


def sqlite_path(url: str | Path) -> Path:
    """Return the SQLite file of a path or ``sqlite:///`` URL (``sqlite:////abs``: absolute)."""
    return Path(str(url).removeprefix("sqlite:///")).expanduser()


def database_url(
    *, explicit: str | None, env: Mapping[str, str], default: str | Path
) -> str | Path:
    """Return ``explicit``, else the URL in :data:`DATABASE_URL_ENV`, else ``default``.

    For the edge (CLI, scripts): the library itself never reads the environment.
    """
    return explicit or env.get(DATABASE_URL_ENV) or default


def connection_options() -> dict[str, Any]:
    """Return the psycopg connection settings langgraph-checkpoint-postgres expects."""
    from psycopg.rows import dict_row

    return {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


def _unavailable(url: str, exc: BaseException) -> DatabaseUnavailable:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DatabaseUnavailable(
        f"database url: cannot connect to {redacted(url)!r}: {detail} "
        f"(fix: start PostgreSQL or correct the URL; set {DATABASE_URL_ENV} or --database-url)"
    )


def unavailable_error(url: str, exc: BaseException) -> DatabaseUnavailable:
    """Return the error for a PostgreSQL server at ``url`` that refused a connection."""
    return _unavailable(url, exc)


def missing_driver_error(exc: ImportError) -> ConfigurationError:
    """Return the error for PostgreSQL support (psycopg, the savers) not being installed."""
    return _missing_driver(exc)


def _missing_driver(exc: ImportError) -> ConfigurationError:
    return ConfigurationError(
        "database url", f"PostgreSQL support is not installed ({exc.name})", fix=_INSTALL
    )
