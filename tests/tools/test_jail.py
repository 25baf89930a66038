"""The sandbox's view of the filesystem: what it hides and what a command still needs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.tools.bash import bash_tools
from noema_graph.tools.jail import SandboxPolicy, bwrap_argv


def _binds(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--ro-bind-try"]


def test_a_python_under_tmp_is_bound_back_over_the_private_tmp(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a checkout (and its virtualenv) under /tmp: the sandbox's own /tmp would hide it
    venv = "/tmp/some-checkout/.venv"
    monkeypatch.setattr(sys, "prefix", venv)
    argv = bwrap_argv("bwrap", root=tmp_path, network=False, policy=SandboxPolicy())
    assert venv in _binds(argv)
    assert argv.index(venv) > argv.index("/tmp")  # bound after the tmpfs that covers it


def test_a_python_under_the_system_dirs_needs_no_bind_of_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("prefix", "base_prefix", "exec_prefix", "base_exec_prefix"):
        monkeypatch.setattr(sys, name, "/usr")
    monkeypatch.setattr(sys, "executable", "/usr/bin/python3")
    argv = bwrap_argv("bwrap", root=tmp_path, network=False, policy=SandboxPolicy())
    assert _binds(argv) == []  # /usr is in the sandbox already (read-only)


def test_the_default_view_holds_the_workdir_system_dirs_and_python_only(tmp_path: Path) -> None:
    argv = bwrap_argv("bwrap", root=tmp_path, network=False, policy=SandboxPolicy())
    assert "/" not in _binds(argv) and argv[7:10] != ["--ro-bind", "/", "/"]
    shown = {argv[i + 1] for i, arg in enumerate(argv) if arg in {"--ro-bind", "--symlink"}}
    assert "/usr" in shown and "/etc" in shown
    assert ["--bind", str(tmp_path), str(tmp_path)] == argv[
        argv.index("--bind") : argv.index("--bind") + 3
    ]
    assert not any(p in _binds(argv) for p in ("/home", "/root", "/run", str(tmp_path.parent)))
    assert str(Path(sys.prefix).resolve()) in _binds(argv)


def test_read_paths_are_shown_read_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    argv = bwrap_argv("bwrap", root=tmp_path / "work", network=False,
                      policy=SandboxPolicy(read_paths=(str(data),)))  # fmt: skip
    assert str(data) in _binds(argv)


def test_a_read_path_that_does_not_exist_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ConfigurationError, match=r"read_paths: '.*nowhere' does not exist"):
        SandboxPolicy(read_paths=(str(missing),))
    with pytest.raises(ConfigurationError, match="nowhere"):
        bash_tools(read_paths=[str(missing)])
