"""The attack arena: a working directory, host markers, a listening socket and a secret."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from noema_graph.config import Permission
from noema_graph.tools import ToolRegistry
from noema_graph.tools.bash import bash_tools
from noema_graph.tools.file_edit import file_edit_tools
from noema_graph.tools.jail import SandboxPolicy
from noema_graph.tools.python_executor import python_executor_tools

SECRET_VAR = "NOEMA_ATTACK_SECRET"
SURVIVOR_WAIT_S = 5.0
ALL_PERMISSIONS: tuple[Permission, ...] = ("fs:read", "fs:write", "shell:execute")


class Listener:
    """A TCP server on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port: int = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@dataclass
class Arena:
    """One attack's world; :meth:`assert_contained` checks the four promises."""

    workdir: Path
    mark: str
    secret: str
    listener: Listener
    outputs: list[str] = field(default_factory=list)
    before: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def host_markers(self) -> list[Path]:
        """Places outside the working directory an attack tries to write to."""
        home = Path(os.path.expanduser("~"))
        return [Path(d, self.mark) for d in ("/tmp", "/etc", "/var/tmp", "/dev/shm", home)]

    def tools(
        self,
        permissions: tuple[Permission, ...] = ALL_PERMISSIONS,
        *,
        policy: SandboxPolicy | None = None,
        allow_network: bool = False,
        timeout_s: float = 20,
    ) -> dict[str, BaseTool]:
        registry = ToolRegistry(file_edit_tools())
        registry.register_many(bash_tools(policy=policy, allow_network=allow_network))
        registry.register_many(python_executor_tools(allow_network=allow_network, policy=policy))
        tools = registry.as_langchain_tools(
            permissions=permissions, working_directory=self.workdir, timeout_s=timeout_s
        )
        return {tool.name: tool for tool in tools}

    def freeze(self) -> None:
        """Take the 'before' picture again (after a test set up files outside)."""
        self.before = snapshot(self.workdir.parent)

    def run(self, tool: BaseTool, **args: Any) -> tuple[str, dict[str, Any]]:
        """Invoke ``tool`` and return (status, parsed observation); remember the output."""
        message = tool.invoke({"type": "tool_call", "id": "a", "name": tool.name, "args": args})
        self.outputs.append(str(message.content))
        return str(message.status), json.loads(str(message.content))

    def survivors(self) -> list[int]:
        """Return host pids whose command line carries this attack's mark."""
        found: list[int] = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    if self.mark.encode() in (entry / "cmdline").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    continue
        return found

    def assert_contained(self) -> None:
        """Nothing outside changed, no secret leaked, no process survived, no connection."""
        assert snapshot(self.workdir.parent) == self.before, "files outside the workdir changed"
        assert (self.workdir.parent / "outside" / "secret.txt").read_text() == "top secret"
        for marker in self.host_markers:
            assert not marker.exists(), f"attack wrote {marker}"
        assert not any(self.secret in out for out in self.outputs), "the secret leaked"
        deadline = time.monotonic() + SURVIVOR_WAIT_S
        while self.survivors() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.survivors() == [], "a process outlived the tool call"
        assert self.listener.accepted == 0, "a connection reached the host"


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Return size and mtime of every file under ``folder`` except the working directory."""
    state: dict[str, tuple[int, int]] = {}
    for parent, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if Path(parent, d) != folder / "work"]
        for name in [*files, *dirs]:
            info = Path(parent, name).lstat()
            state[str(Path(parent, name).relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return state


@pytest.fixture
def arena(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Arena]:
    """A working directory beside an 'outside' folder with a secret, ready for one attack."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    secret = f"sk-{uuid.uuid4().hex}"
    monkeypatch.setenv(SECRET_VAR, secret)
    listener = Listener()
    mark = f"noema-attack-{uuid.uuid4().hex[:10]}"
    world = Arena(workdir=workdir, mark=mark, secret=secret, listener=listener)
    world.freeze()
    try:
        yield world
    finally:
        listener.close()
        for pid in world.survivors():
            os.kill(pid, 9)
