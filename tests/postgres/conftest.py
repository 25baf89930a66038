"""A fresh database per test on the session's PostgreSQL server (``pg_server`` in
``tests/conftest.py``)."""

from __future__ import annotations

from uuid import uuid4

import pytest

from tests.pg import PostgresServer


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """Return the URL of a new, empty database on the session's server."""
    return pg_server.create_database(f"t_{uuid4().hex[:12]}")
