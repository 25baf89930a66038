"""A real PostgreSQL server for the session (see :mod:`tests.pg`), a fresh database per test.

The server starts once per session. If it cannot start here the tests skip, saying why; under
CI (``CI`` set) they fail instead, so CI never skips them silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from uuid import uuid4

import pytest

from tests.pg import PostgresServer, ServerUnavailable


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """Start PostgreSQL for the session (as an unprivileged uid under root); stop it after."""
    server = PostgresServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        server.stop()
        reason = f"PostgreSQL could not start, so the PostgreSQL tests cannot run: {exc}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(f"!!! SKIPPED: {reason}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """Return the URL of a new, empty database on the session's server."""
    return pg_server.create_database(f"t_{uuid4().hex[:12]}")
