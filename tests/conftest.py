"""Shared fixtures: the scripted model, a manual clock, and a block on real network calls."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest

from noema_graph.clock import ManualClock, use_clock
from tests.pg import PostgresServer, ServerUnavailable
from tests.scripted import ScriptedChatModel

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise ConnectionRefusedError(f"tests may not reach {host!r}: network is blocked")
    return _real_connect(self, address)


@pytest.fixture(autouse=True, scope="session")
def _prompt_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the embedded model's saved prompt prefixes in the session's temporary folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NOEMA_PROMPT_CACHE", str(tmp_path_factory.mktemp("prompt-cache")))
        yield


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block every non-loopback connection, real provider keys and a database URL."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("NOEMA_BASE_URL", raising=False)
    monkeypatch.delenv("NOEMA_MODEL", raising=False)
    monkeypatch.delenv("NOEMA_DATABASE_URL", raising=False)  # runs use the file each test names


@pytest.fixture
def scripted() -> Iterator[Any]:
    """Return a factory of strict scripted models; each must use its whole script."""
    made: list[ScriptedChatModel] = []

    def factory(*replies: Any, **kwargs: Any) -> ScriptedChatModel:
        model = ScriptedChatModel(script=list(replies), **kwargs)
        made.append(model)
        return model

    yield factory
    for model in made:
        model.assert_complete()


@pytest.fixture
def manual_clock() -> Iterator[ManualClock]:
    """Return a clock that moves only on ``advance()``, installed for the test's duration."""
    with use_clock(ManualClock()) as clock:
        yield clock


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    """Start PostgreSQL once for the session (as an unprivileged uid under root); stop it after.

    If it cannot start here the tests that need it skip, saying why; under CI (``CI`` or
    ``NOEMA_REQUIRE_MCP`` set) they fail instead, so CI never skips them silently.
    """
    server = PostgresServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        server.stop()
        reason = f"PostgreSQL could not start, so the PostgreSQL tests cannot run: {exc}"
        if os.environ.get("CI") or os.environ.get("NOEMA_REQUIRE_MCP"):
            pytest.fail(reason)
        pytest.skip(f"!!! SKIPPED: {reason}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """Return the URL of a new, empty database on the session's PostgreSQL server."""
    return pg_server.create_database(f"t_{uuid4().hex[:12]}")
