"""Each module has one path: no alias module re-exports another, and stored names still import.

A module that only re-exports another one (``from x import *``, with or without a warning) is
a second path to the same concept; the package keeps none. Checkpoint files name classes and
functions by module path, so every ``noema_graph`` path a stored file names stays importable:
``tests/storage/fixtures/main-2026-11-27.sqlite`` was written before the storage modules moved
and names ``noema_graph.compact_serde`` (the serializer's allow-list alias,
:data:`noema_graph.storage.serde.STORED_ALIASES`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sqlite3
import zlib
from pathlib import Path

import pytest

from noema_graph.storage.serde import STORED_ALIASES, allowed_types
from tests.storage.fixtures.write_main_fixture import FIXTURE

PACKAGE = Path(__file__).resolve().parents[1] / "noema_graph"
STAR_EXPORTS = {"inspect.py"}
"""Public modules whose API is another module's ``__all__`` (``noema_graph.inspect``)."""
REMOVED = (
    "noema_graph.backends",
    "noema_graph.cli_runs",
    "noema_graph.doctor",
    "noema_graph.doctor_cli",
    "noema_graph.doctor_pg",
    "noema_graph.inspect_cli",
    "noema_graph.pg_savers",
    "noema_graph.sqlite_savers",
    "noema_graph.nodes.ledger",
    "noema_graph.observability.eventlog",
    "noema_graph.noema.driver",
    "noema_graph.evals.claims",
    "noema_graph.tools.schemas",
    "noema_graph.tools.mcp_server",
)
"""A sample of the alias paths the package had; each is gone."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _is_deprecation_warning(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and "warn" in ast.unparse(node.value.func)
        and "DeprecationWarning" in ast.unparse(node.value)
    )


def test_no_module_is_an_alias_of_another() -> None:
    aliases: list[str] = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        relative = path.relative_to(PACKAGE).as_posix()
        star = any(
            isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in tree.body
        )
        if (star and relative not in STAR_EXPORTS) or any(map(_is_deprecation_warning, tree.body)):
            aliases.append(relative)
    assert aliases == []


def test_a_star_export_module_states_its_names() -> None:
    for relative in STAR_EXPORTS:
        module = importlib.import_module(
            "noema_graph." + relative.removesuffix(".py").replace("/", ".")
        )
        assert module.__all__
        assert all(hasattr(module, name) for name in module.__all__)


@pytest.mark.parametrize("path", REMOVED)
def test_an_alias_path_is_gone(path: str) -> None:
    assert importlib.util.find_spec(path) is None


def _stored_paths(path: Path) -> set[str]:
    """Return the ``noema_graph`` module paths named in a file's checkpoints and writes."""
    with sqlite3.connect(path) as conn:
        rows = [*conn.execute("SELECT type, checkpoint FROM checkpoints")]
        rows += [*conn.execute("SELECT type, value FROM writes")]
    raw = b"".join(zlib.decompress(b) if t == "msgpack+zlib" else (b or b"") for t, b in rows)
    return {m.decode() for m in re.findall(rb"noema_graph(?:\.\w+)+", raw)}


def test_every_path_a_stored_file_names_imports_and_is_allow_listed() -> None:
    stored = _stored_paths(FIXTURE)
    assert "noema_graph.compact_serde" in stored
    allowed = {module for module, *_ in allowed_types()}
    for path in stored:
        importlib.import_module(path)
        assert path in allowed, path
    for module, name in STORED_ALIASES:
        assert callable(getattr(importlib.import_module(module), name))
