"""One error hierarchy: every exception the package defines or raises derives from NoemaError.

Read from the source: each exception class the package defines has ``NoemaError`` among its
ancestors, and no module raises a built-in exception itself, except where a protocol asks for
one (listed in :data:`PROTOCOL`, each with its reason). Errors keep a built-in base where
callers catch one (``FieldError`` is a ``ValueError``, ``NotFound`` a ``KeyError``).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
from pathlib import Path

import noema_graph.errors as errors
from noema_graph.errors import NoemaError
from tests.doc_pages import read, section

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "noema_graph"
BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
PROTOCOL = {
    "NotImplementedError": "an abstract method a subclass must define",
    "AttributeError": "a module's __getattr__ answers a missing name so (PEP 562)",
    "ValueError": "a pydantic validator: pydantic reports it as a ValidationError naming the field",
}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Return the parsed source of ``path`` (parsed once for all the tests here)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _raised(node: ast.Raise) -> str | None:
    exc = node.exc
    if exc is None:
        return None
    return ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)


def _allowed(name: str, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """Return whether raising built-in ``name`` in ``function`` is one of :data:`PROTOCOL`."""
    if name not in PROTOCOL:
        return False
    if name == "NotImplementedError":
        return True
    if name == "AttributeError":
        return function is not None and function.name == "__getattr__"
    if name == "ValueError" and function is not None:
        return any("validator" in ast.unparse(d) for d in function.decorator_list)
    return False


def _builtin_raises(path: Path) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST, function: ast.FunctionDef | ast.AsyncFunctionDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if not isinstance(child, ast.Raise):
                visit(child, inner)
                continue
            name = _raised(child)
            if name in BUILTIN_ERRORS and not _allowed(name, inner):
                found.append(f"{path.relative_to(ROOT)}:{child.lineno} {name}")
            visit(child, inner)

    visit(_tree(path), None)
    return found


def test_no_module_raises_a_built_in_exception_of_its_own() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _builtin_raises(path)]
    assert found == []


def test_every_exception_class_of_the_package_derives_from_noema_error() -> None:
    outside: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        names = [n.name for n in _tree(path).body if isinstance(n, ast.ClassDef)]
        if not names:
            continue
        module = importlib.import_module(_module(path))
        for name in names:
            value = getattr(module, name)
            if issubclass(value, BaseException) and not issubclass(value, NoemaError):
                outside.append(f"{module.__name__}.{name}")
    assert outside == []


def test_modules_called_errors_hold_errors() -> None:
    for path in sorted(PACKAGE.rglob("errors.py")):
        module = importlib.import_module(_module(path))
        defined = [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, NoemaError) and v.__module__ == module.__name__
        ]
        assert defined, f"{path.relative_to(ROOT)} defines no error"


def test_the_readme_error_table_lists_every_error() -> None:
    table = section("README.md", "## Errors")
    assert '--8<-- "README.md:errors"' in read("docs/errors.md")  # the manual includes it
    missing: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = None
        for node in _tree(path).body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            module = module or importlib.import_module(_module(path))
            value = getattr(module, node.name)
            named = f"`{node.name}`" in table
            if isinstance(value, type) and issubclass(value, NoemaError) and not named:
                missing.append(f"{module.__name__}.{node.name}")
    assert missing == []


def test_control_flow_signals_say_so() -> None:
    from noema_graph.cli.errors import Paused
    from noema_graph.effects import Deadline

    for signal in (Paused, Deadline, errors.TransientModelError):
        assert signal.__doc__ and "control-flow signal" in signal.__doc__, signal
