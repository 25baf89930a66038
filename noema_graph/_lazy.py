"""Lazy package exports: a name is imported from its module on first access (PEP 562).

A package lists its public names and the module each lives in; ``import noema_graph.tools``
then costs next to nothing, and ``noema_graph.tools.MCPToolProvider`` imports the MCP client
only when someone reads it. Each package also imports the same names under
``TYPE_CHECKING``, so type checkers and IDEs see ordinary re-exports.

Usage in a package ``__init__``::

    __getattr__, __dir__ = lazy_exports(
        __name__, {"noema_graph.tools.registry": ("ToolRegistry",)}
    )
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Iterable[str]], *, submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package`` serving ``exports`` lazily.

    Args:
        package: The package's ``__name__``.
        exports: Module path -> the names it provides.
        submodules: Submodules exported as attributes (``noema_graph.agents.schemas``).

    Returns:
        The module-level ``__getattr__`` (imports the owning module at first access and
        caches the value in the package namespace) and ``__dir__`` (real and lazy names).
    """
    where = {name: module for module, names in exports.items() for name in names}
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in modules:
            return importlib.import_module(f"{package}.{name}")
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where, *modules})

    return __getattr__, __dir__


def loaded_attr(module: str, name: str) -> Any | None:
    """Return ``module.name`` if ``module`` is already imported, else None; never imports.

    An object can only be an instance of a class whose module has been imported, so
    ``isinstance`` checks against optional heavy libraries (``openai``, ``langchain_openai``)
    go through this instead of importing the library to find out it was not in use.
    """
    loaded = sys.modules.get(module)
    return None if loaded is None else getattr(loaded, name, None)
