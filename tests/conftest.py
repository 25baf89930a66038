"""Shared fixtures: the scripted model, a manual clock, and a block on real network calls."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from noema_graph.clock import ManualClock, use_clock
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
