"""Fixtures for the tools tests: sandboxes, real MCP servers and process helpers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MCP_VENV = REPO / ".mcp-venv"
MCP_NODE = REPO / ".mcp-node" / "node_modules" / "@modelcontextprotocol"
TIME_SERVER = MCP_VENV / "bin" / "mcp-server-time"
GIT_SERVER = MCP_VENV / "bin" / "mcp-server-git"
FILESYSTEM_SERVER = MCP_NODE / "server-filesystem" / "dist" / "index.js"
EVERYTHING_SERVER = MCP_NODE / "server-everything" / "dist" / "index.js"
FAKE_SERVERS = Path(__file__).parent / "fake_servers"

INSTALL_HINT = "run scripts/install_mcp_servers.sh"


def require(path: Path) -> None:
    """Skip the test when a third-party MCP server is not installed (fail in CI instead)."""
    if not path.exists():
        message = f"MCP server not installed: {path.relative_to(REPO)} ({INSTALL_HINT})"
        if os.environ.get("NOEMA_REQUIRE_MCP") == "1":
            pytest.fail(message)
        pytest.skip(message)


def child_pids() -> set[int]:
    """Return the pids whose parent is this test process."""
    me = os.getpid()
    pids: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            pids.add(int(entry.name))
    return pids


def wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A sandbox root with a sibling 'outside' folder holding a secret file."""
    root = tmp_path / "work"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (root / "notes.txt").write_text("hello world\nsecond line\n")
    return root


@pytest.fixture
def everything_http() -> Iterator[str]:
    """Start server-everything over streamable HTTP on a free port; kill its group after."""
    require(EVERYTHING_SERVER)
    port = free_port()
    process = subprocess.Popen(
        ["node", str(EVERYTHING_SERVER), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    try:
        if not wait_until(listening, 20):
            pytest.fail("server-everything did not start listening over HTTP")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def python_exe() -> str:
    return sys.executable
