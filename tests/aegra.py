"""Aegra servers of the project's ``langgraph.json`` for the tests and the benchmarks.

Aegra (an open-source server of the LangGraph Platform API) needs Python >= 3.12, so it lives
in its own virtualenv, made by ``deploy/install_aegra.sh`` (``.aegra-venv``, or ``AEGRA_VENV``),
which holds noema-graph's dependencies; ``deploy/serve.sh`` puts this checkout first on
``PYTHONPATH``. The tests start servers the way the deploy recipe does: ``deploy/migrate.sh``
once, then one ``deploy/serve.sh PORT`` per server, each in its own process group, so
:meth:`AegraServer.kill` is a ``kill -9`` of the whole server (the CLI and its uvicorn).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0


class AegraUnavailable(RuntimeError):
    """Aegra is not installed here; the message says how to install it."""


def aegra_venv() -> Path:
    """Return Aegra's virtualenv.

    Raises:
        AegraUnavailable: it has no ``aegra`` program.
    """
    venv = Path(os.environ.get("AEGRA_VENV", ROOT / ".aegra-venv"))
    if not (venv / "bin" / "aegra").exists():
        raise AegraUnavailable(f"no Aegra in {venv}: run bash deploy/install_aegra.sh")
    return venv


def free_port() -> int:
    """Return a port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(database_url: str, env: Mapping[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in {"OPENAI_API_KEY", "PYTHONPATH"}}
    return {
        **base,
        "AEGRA_VENV": str(aegra_venv()),
        "DATABASE_URL": database_url,
        "NO_PROXY": "127.0.0.1,localhost",
        "LANGSMITH_TRACING": "false",
        **env,
    }


def migrate(database_url: str) -> None:
    """Create Aegra's tables in ``database_url`` with ``deploy/migrate.sh``."""
    done = subprocess.run(
        ["bash", str(DEPLOY / "migrate.sh")],
        env=_environment(database_url, {}),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise AegraUnavailable(f"deploy/migrate.sh failed: {(done.stderr + done.stdout)[-2000:]}")


@dataclass
class AegraServer:
    """One ``deploy/serve.sh`` process group on a port of 127.0.0.1."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        """Return the server's base URL."""
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def launch(cls, database_url: str, env: Mapping[str, str], log: Path) -> AegraServer:
        """Start ``deploy/serve.sh`` on a free port (not waiting for it: :meth:`wait_ready`)."""
        port = free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["bash", str(DEPLOY / "serve.sh"), str(port)],
                cwd=log.parent,
                env=_environment(database_url, env),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: killed or stopped as a whole
            )
        return cls(port, process, log)

    def wait_ready(self) -> None:
        """Return once ``/health`` answers 200.

        Raises:
            AegraUnavailable: the server exited or did not answer in time (with its log).
        """
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AegraUnavailable(f"Aegra exited:\n{self.log.read_text()[-4000:]}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AegraUnavailable(f"Aegra did not start:\n{self.log.read_text()[-4000:]}")

    def alive(self) -> bool:
        """Return True while a process of the server's group is left."""
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def kill(self) -> None:
        """``kill -9`` the whole server at once (no shutdown code runs); wait until it is gone."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        deadline = time.monotonic() + STOP_TIMEOUT_S  # its orphaned children are reaped by init
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        """Interrupt the server as Ctrl-C would; ``kill -9`` what outlives the timeout."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self.alive() and time.monotonic() < deadline:
            self.process.poll()
            time.sleep(0.1)
        if self.alive():
            self.kill()
        self.process.wait()


@contextmanager
def aegra_cluster(
    database_url: str, count: int, env: Mapping[str, str], folder: Path
) -> Iterator[list[AegraServer]]:
    """Migrate ``database_url``, start ``count`` servers, stop them all on exit.

    The first server starts alone: at start Aegra registers one default assistant per graph,
    and two servers doing that at once on a new database collide on its primary key (one
    exits with a UniqueViolationError). The others start together once it answers.
    """
    migrate(database_url)
    with ExitStack() as stack:
        servers: list[AegraServer] = []
        for number in range(count):
            server = AegraServer.launch(database_url, env, folder / f"aegra-{number}.log")
            stack.callback(server.stop)
            servers.append(server)
            if number == 0:
                server.wait_ready()
        for server in servers[1:]:
            server.wait_ready()
        yield servers
