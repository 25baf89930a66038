"""The sandbox's view of the filesystem: what it hides and what a command still needs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from noema_graph.tools import jail
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


def test_a_python_outside_hidden_folders_needs_no_bind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(jail, "_needed_paths", lambda network: ["/usr/lib/python3"])
    argv = bwrap_argv("bwrap", root=tmp_path, network=False, policy=SandboxPolicy())
    assert _binds(argv) == []  # visible through the read-only root already
