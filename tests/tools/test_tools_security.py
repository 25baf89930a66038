"""The attack table (also in noema_graph/tools/SECURITY.md): each is refused or contained.

Every case snapshots the filesystem around the working directory and asserts that nothing
outside it changed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from langchain_core.tools import BaseTool

from noema_graph.config import AgentConfig
from noema_graph.tools import toolkits_for
from noema_graph.tools.python_executor import python_executor_tools
from noema_graph.tools.registry import ToolRegistry


@dataclass(frozen=True)
class Attack:
    name: str
    tool: str
    args: dict[str, object]
    expect: str  # error type, or "contained" for a success whose effect is bounded
    setup: str = ""


ATTACKS = [
    Attack(
        "traversal read", "read_file", {"path": "../outside/secret.txt"}, "path_outside_workdir"
    ),
    Attack(
        "traversal write",
        "write_file",
        {"path": "../outside/x.txt", "content": "p"},
        "path_outside_workdir",
    ),
    Attack(
        "nested traversal",
        "write_file",
        {"path": "a/../../outside/y", "content": "p"},
        "path_outside_workdir",
    ),
    Attack("absolute read", "read_file", {"path": "/etc/passwd"}, "path_outside_workdir"),
    Attack(
        "absolute write",
        "write_file",
        {"path": "/tmp/noema-pwn.txt", "content": "p"},
        "path_outside_workdir",
    ),
    Attack("absolute list", "list_dir", {"path": "/"}, "path_outside_workdir"),
    Attack(
        "search outside",
        "search_files",
        {"pattern": "secret", "path": ".."},
        "path_outside_workdir",
    ),
    Attack(
        "symlink read", "read_file", {"path": "link/secret.txt"}, "path_outside_workdir", "dirlink"
    ),
    Attack(
        "symlink write",
        "write_file",
        {"path": "evil.txt", "content": "p"},
        "path_outside_workdir",
        "filelink",
    ),
    Attack(
        "dangling symlink write",
        "write_file",
        {"path": "dangling", "content": "p"},
        "path_outside_workdir",
        "dangling",
    ),
    Attack(
        "hard link write",
        "write_file",
        {"path": "hard.txt", "content": "p"},
        "path_outside_workdir",
        "hardlink",
    ),
    Attack(
        "symlink not searched", "search_files", {"pattern": "top secret"}, "contained", "dirlink"
    ),
    Attack(
        "shell metachars w/o shell:execute",
        "bash",
        {"command": "echo hi; rm -rf .. && $(touch ../outside/pwn) | cat"},
        "permission_denied",
    ),
    Attack(
        "python w/o shell:execute",
        "python_executor",
        {"code": "open('../outside/pwn','w')"},
        "permission_denied",
    ),
    Attack(
        "infinite loop", "python_executor", {"code": "while True: pass", "timeout_s": 1}, "timeout"
    ),
    Attack("memory bomb", "python_executor", {"code": "x = bytearray(4 * 1024**3)"}, "contained"),
    Attack(
        "fork of sleepers",
        "bash",
        {
            "command": "for i in 1 2 3; do (sleep 30 && touch ../outside/late$i) & done; sleep 30",
            "timeout_s": 1,
        },
        "timeout",
    ),
    Attack("huge output (bash)", "bash", {"command": "yes | head -c 50000000"}, "contained"),
    Attack(
        "huge output (python)", "python_executor", {"code": "print('x' * 30_000_000)"}, "contained"
    ),
    Attack(
        "huge file (python)",
        "python_executor",
        {"code": "open('big','wb').write(b'0' * 200_000_000)"},
        "contained",
    ),
]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    state: dict[str, tuple[int, int]] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder, name)
            info = path.lstat()
            state[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return state


def prepare(workdir: Path, setup: str) -> None:
    outside = workdir.parent / "outside"
    if setup == "dirlink":
        (workdir / "link").symlink_to(outside)
    elif setup == "filelink":
        (workdir / "evil.txt").symlink_to(outside / "secret.txt")
    elif setup == "dangling":
        (workdir / "dangling").symlink_to(outside / "created-by-attack")
    elif setup == "hardlink":
        os.link(outside / "secret.txt", workdir / "hard.txt")


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_refused_or_contained(attack: Attack, workdir: Path) -> None:
    prepare(workdir, attack.setup)
    permissions = ("fs:read", "fs:write")
    if attack.tool in {"bash", "python_executor"} and attack.expect != "permission_denied":
        permissions = (*permissions, "shell:execute")
    config = AgentConfig(working_directory=workdir, permissions=permissions, tool_timeout_s=20)
    registry = ToolRegistry(
        s for s in ToolRegistry(_builtin(config)).list() if s.name != "python_executor"
    )
    registry.register_many(
        python_executor_tools(memory_limit_bytes=256 * 1024**2, max_file_bytes=10 * 1024**2)
    )
    tool = {
        t.name: t
        for t in registry.as_langchain_tools(
            permissions=permissions, working_directory=workdir, timeout_s=20
        )
    }[attack.tool]
    outside_parent = workdir.parent
    before = {k: v for k, v in snapshot(outside_parent).items() if not k.startswith("work/")}
    tmp_before = Path("/tmp/noema-pwn.txt").exists()

    message = tool.invoke({"type": "tool_call", "id": "a", "name": tool.name, "args": attack.args})
    body = json.loads(message.content)

    if attack.expect == "contained":
        assert message.status == "success", body
        _assert_contained(attack, body, workdir)
    else:
        assert message.status == "error", body
        assert body["error"]["type"] == attack.expect
    after = {k: v for k, v in snapshot(outside_parent).items() if not k.startswith("work/")}
    assert after == before, "something outside the working directory changed"
    assert (workdir.parent / "outside" / "secret.txt").read_text() == "top secret"
    assert Path("/tmp/noema-pwn.txt").exists() == tmp_before
    assert len(message.content) <= 8_000


def _builtin(config: AgentConfig):
    from noema_graph.tools.toolkits import builtin_registry

    return builtin_registry(config).list()


def _assert_contained(attack: Attack, body: dict, workdir: Path) -> None:
    data = body.get("data") or {}
    if attack.name == "memory bomb":
        assert data["exit_code"] != 0
        assert "MemoryError" in data["output"]
    elif attack.name.startswith("huge output"):
        assert body["truncated"] is True
        assert body["full_chars"] < 200_000  # the kept output is capped, not 30-50 MB
    elif attack.name == "huge file (python)":
        assert data["exit_code"] != 0
        assert (workdir / "big").stat().st_size <= 10 * 1024**2
    elif attack.name == "symlink not searched":
        assert data["matches"] == []


def test_attack_table_matches_security_md() -> None:
    text = (Path(__file__).parents[2] / "noema_graph" / "tools" / "SECURITY.md").read_text()
    for attack in ATTACKS:
        assert f"| {attack.name} |" in text, f"{attack.name!r} missing from SECURITY.md"


def test_bash_after_grant_cannot_escape_via_cwd(workdir: Path) -> None:
    config = AgentConfig(working_directory=workdir, enabled_toolkits=("bash",), tool_timeout_s=5)
    tool: BaseTool = toolkits_for(config)[0]
    message = tool.invoke(
        {"type": "tool_call", "id": "a", "name": "bash", "args": {"command": "cd ~ && pwd"}}
    )
    assert json.loads(message.content)["data"]["output"].strip() == str(workdir)
