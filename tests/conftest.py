"""Shared fixtures: the scripted model, a manual clock, a block on real network calls, and one
PostgreSQL server for the whole run.

Under pytest-xdist (``-n 2 --dist loadgroup``, as ``scripts/test.sh`` runs the suite) the
controller starts the one PostgreSQL server and hands its port to every worker
(:class:`SharedPostgres`); the modules that run the embedded model form one work unit, so one
worker loads the model once and runs them one after another while the other worker runs the
rest (the model's threads do not compete with a second model), and the other tests go to the
workers a module at a time (a module's fixtures are set up once).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from noema_graph.clock import ManualClock, use_clock
from tests.pg import PostgresServer, ServerUnavailable
from tests.scripted import ScriptedChatModel

EMBEDDED_MODEL_GROUP = "embedded-model"
"""The xdist work unit of the modules with ``llm`` tests: one worker runs them, one model loaded."""
PG_KEY = "noema_pg"
"""The ``workerinput`` key under which the controller passes its PostgreSQL server."""

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


@pytest.fixture(autouse=True, scope="session")
def _one_thread() -> Iterator[None]:
    """Run the embedded model on one thread, whatever the load: its answers (which the tests
    read) can differ with the thread count, and the default depends on the load at start."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NOEMA_LOCAL_THREADS", "1")
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


@functools.cache
def _runs_the_embedded_model(module: str) -> bool:
    """Return whether the test module at ``module`` (a path from the root) has ``llm`` tests."""
    path = Path(__file__).resolve().parents[1] / module
    return path.suffix == ".py" and "mark.llm" in path.read_text(encoding="utf-8")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadgroup``, send work a module at a time, the embedded model's together.

    The modules with ``llm`` tests form one unit (:data:`EMBEDDED_MODEL_GROUP`): one worker
    loads the model once and runs them one after another while the other worker runs the
    rest. Every other module is a unit of its own, so its fixtures are set up on one worker.
    (xdist's own ``xdist_group`` marks do not reach the scheduler under pytest 9, which keeps
    node ids elsewhere than xdist 3.8 writes the group.)
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModelAwareScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return EMBEDDED_MODEL_GROUP if _runs_the_embedded_model(module) else module

    return ModelAwareScheduling(config, log)


class SharedPostgres:
    """The xdist controller's plugin: one PostgreSQL server for all workers.

    The server starts when the first worker is set up and stops when the run ends; a worker
    reads its port from ``workerinput`` (see :func:`pg_server`). A server that cannot start
    passes its reason on instead, and the workers' PostgreSQL tests skip or fail with it.
    """

    def __init__(self) -> None:
        self.server: PostgresServer | None = None
        self.failure: str | None = None

    def pytest_configure_node(self, node: Any) -> None:
        """Start the server once; pass its root and port (or why it failed) to ``node``."""
        if self.server is None and self.failure is None:
            server = PostgresServer()
            try:
                server.start()
                self.server = server
            except ServerUnavailable as exc:
                server.stop()
                self.failure = str(exc)
        shared = {"failure": self.failure}
        if self.server is not None:
            shared |= {"root": str(self.server.root), "port": self.server.port}
        node.workerinput[PG_KEY] = shared

    def pytest_unconfigure(self) -> None:
        """Stop the server after the last worker is done."""
        if self.server is not None:
            self.server.stop()


def pytest_configure(config: pytest.Config) -> None:
    """On the xdist controller, register the one shared PostgreSQL server."""
    controller = not hasattr(config, "workerinput")
    xdist = controller and config.pluginmanager.hasplugin("xdist")
    if xdist and config.getoption("numprocesses", None):
        config.pluginmanager.register(SharedPostgres(), "noema-shared-postgres")


def _unavailable(reason: str) -> None:
    """Skip the PostgreSQL tests, saying why; fail them under CI so it never skips silently."""
    reason = f"PostgreSQL could not start, so the PostgreSQL tests cannot run: {reason}"
    if os.environ.get("CI") or os.environ.get("NOEMA_REQUIRE_MCP"):
        pytest.fail(reason)
    pytest.skip(f"!!! SKIPPED: {reason}")


@pytest.fixture(scope="session")
def pg_server(pytestconfig: pytest.Config) -> Iterator[PostgresServer]:
    """Start PostgreSQL once for the run (as an unprivileged uid under root); stop it after.

    Under xdist the controller's server serves every worker (:class:`SharedPostgres`). If it
    cannot start here the tests that need it skip, saying why; under CI (``CI`` or
    ``NOEMA_REQUIRE_MCP`` set) they fail instead, so CI never skips them silently.
    """
    shared: dict[str, Any] | None = getattr(pytestconfig, "workerinput", {}).get(PG_KEY)
    if shared is not None:
        if shared["failure"] is not None:
            _unavailable(shared["failure"])
        yield PostgresServer(root=Path(shared["root"]), port=shared["port"])
        return
    server = PostgresServer()
    try:
        server.start()
    except ServerUnavailable as exc:
        server.stop()
        _unavailable(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> str:
    """Return the URL of a new, empty database on the session's PostgreSQL server."""
    return pg_server.create_database(f"t_{uuid4().hex[:12]}")
