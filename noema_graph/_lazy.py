"""Lazy package exports: a name is imported from its module on first access (PEP 562).

A package's ``if TYPE_CHECKING:`` block is the one list of what it exports and where each
name lives: type checkers and IDEs read it as ordinary imports, and :func:`lazy_exports`
reads the same block (parsed from the package's source at the first attribute access) to
import a name from its module only when someone asks for it. ``import noema_graph.tools``
then costs next to nothing, and ``noema_graph.tools.MCPToolProvider`` imports the MCP client
only when someone reads it.

Usage in a package ``__init__``::

    if TYPE_CHECKING:
        from noema_graph.tools.registry import ToolRegistry

    __all__ = ["ToolRegistry"]

    __getattr__, __dir__ = lazy_exports(__name__)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import cache
from typing import Any


def lazy_exports(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package`` serving its TYPE_CHECKING imports.

    A name imported from the package itself (``from noema_graph.agents import schemas`` in
    ``noema_graph/agents/__init__.py``) is served as that submodule.

    Args:
        package: The package's ``__name__``.

    Returns:
        The module-level ``__getattr__`` (imports the owning module at first access and
        caches the value in the package namespace) and ``__dir__`` (real and lazy names).
    """

    @cache
    def exports() -> dict[str, tuple[str, str]]:
        return type_checking_imports(package)

    def __getattr__(name: str) -> Any:
        found = exports().get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = found
        if module == package:
            value: Any = importlib.import_module(f"{package}.{attribute}")
        else:
            value = getattr(importlib.import_module(module), attribute)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports()})

    return __getattr__, __dir__


def type_checking_imports(package: str) -> dict[str, tuple[str, str]]:
    """Return the names ``package`` imports under ``if TYPE_CHECKING:``.

    Returns:
        Exported name -> (absolute module path, attribute name in that module).

    Raises:
        ImportError: The block holds something other than ``from ... import ...``.
    """
    import ast  # only on first lazy access: ``import noema_graph`` stays cheap
    import importlib.util

    where = sys.modules[package].__file__
    if where is None:
        raise ImportError(f"{package!r} has no source file to read its exports from")
    names: dict[str, tuple[str, str]] = {}
    with open(where, encoding="utf-8") as file:
        tree = ast.parse(file.read())
    for node in tree.body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom):
                raise ImportError(
                    f"{package}: line {statement.lineno} of the TYPE_CHECKING block is not "
                    "'from <module> import <names>'; lazy exports read only that form"
                )
            module = importlib.util.resolve_name(
                "." * statement.level + (statement.module or ""), package
            )
            for alias in statement.names:
                names[alias.asname or alias.name] = (module, alias.name)
    return names


def loaded_attr(module: str, name: str) -> Any | None:
    """Return ``module.name`` if ``module`` is already imported, else None; never imports.

    An object can only be an instance of a class whose module has been imported, so
    ``isinstance`` checks against optional heavy libraries (``openai``, ``langchain_openai``)
    go through this instead of importing the library to find out it was not in use.
    """
    loaded = sys.modules.get(module)
    return None if loaded is None else getattr(loaded, name, None)
