"""The package's import layers and the absence of circles, as declared in pyproject.toml.

``[tool.importlinter]`` lists the layers from ``cli`` down to ``errors``; ``lint-imports``
fails on any import that runs up a layer, any circle between the modules of a package, and
any import of ``evals`` or ``cli`` from run-time code. The same contracts are then read file
by file from the source (imports at any depth, ``import_module`` literals, lazy export maps),
and no module imports a private LangGraph name where a public one serves.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def test_imports_follow_the_declared_layers() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout, not an installed copy
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# -- the same layers read file by file, without import-linter ------------------------------

PACKAGE = ROOT / "noema_graph"
PRIVATE_LANGGRAPH = {("langgraph.checkpoint.serde.types", "_DeltaSnapshot")}
"""Private LangGraph names the package imports: LangGraph offers nothing public for these."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[tuple[str, str | None]]:
    """Return (module, imported name or None) for every import in ``path``, at any depth.

    ``import_module("...")`` with a literal counts, and so does a ``noema_graph`` module path
    written as a string in a package ``__init__`` (a lazy export map).
    """
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {(alias.name, None) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            found |= {(base, alias.name) for alias in node.names}
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add((node.args[0].value, None))
        elif (
            path.name == "__init__.py"
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch(r"noema_graph(\.\w+)+", node.value)
        ):
            found.add((node.value, None))
    return found


def _targets(imported: str, name: str | None) -> list[str]:
    """Return the modules an import may load: ``from pkg import sub`` names ``pkg.sub``."""
    return [imported] if name is None else [imported, f"{imported}.{name}"]


def _layer(module: str, container: str, layers: list[str]) -> tuple[int, str] | None:
    if not module.startswith(container + "."):
        return None
    top = module.removeprefix(container + ".").split(".")[0]
    for index, layer in enumerate(layers):
        if top in (part.strip() for part in layer.split("|")):
            return index, top
    return None


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def test_no_file_imports_against_the_layers() -> None:
    against: list[str] = []
    files = sorted(PACKAGE.rglob("*.py"))
    for contract in (c for c in _contracts() if c["type"] == "layers"):
        layers: list[str] = contract["layers"]
        for container in contract["containers"]:
            for path in files:
                source = _layer(_module_name(path), container, layers)
                if source is None:
                    continue
                for imported, name in _imports(path):
                    for target in _targets(imported, name):
                        found = _layer(target, container, layers)
                        if found is not None and (
                            found[0] < source[0] or (found[0] == source[0] and found != source)
                        ):
                            against.append(f"{_module_name(path)} -> {target}")
    assert against == []


def test_run_time_code_reads_no_evaluation_or_cli_module_file_by_file() -> None:
    (contract,) = [c for c in _contracts() if c["type"] == "forbidden"]
    sources: list[str] = contract["source_modules"]
    forbidden: tuple[str, ...] = tuple(contract["forbidden_modules"])
    found = [
        f"{_module_name(path)} -> {target}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if any(f"{_module_name(path)}.".startswith(f"{s}.") for s in sources)
        for imported, name in _imports(path)
        for target in _targets(imported, name)
        if any(f"{target}.".startswith(f"{f}.") for f in forbidden)
    ]
    assert found == []


def test_no_private_langgraph_import() -> None:
    private = [
        f"{_module_name(path)}: {imported} {name or ''}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for imported, name in _imports(path)
        if imported.split(".")[0].startswith("langgraph")
        and (
            any(part.startswith("_") for part in imported.split("."))
            or (name is not None and name.startswith("_"))
        )
        and (imported, name) not in PRIVATE_LANGGRAPH
    ]
    assert private == []
