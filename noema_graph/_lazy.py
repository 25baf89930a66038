"""Lazy package exports: a name is imported from its module on first access (PEP 562).

A package ``__init__`` states its exports twice, in two plain forms a reader checks at a
glance: ``if TYPE_CHECKING:`` imports for type checkers and IDEs, and the map it gives
:func:`lazy_exports` (module -> the names it serves), which imports a name's module only when
someone asks for it (``tests/test_imports.py`` checks the two agree). ``import
noema_graph.tools`` then costs next to nothing, and ``noema_graph.tools.MCPToolProvider``
imports the MCP client only when someone reads it.

Usage in a package ``__init__``::

    if TYPE_CHECKING:
        from noema_graph.tools.registry import ToolRegistry

    __all__ = ["ToolRegistry"]

    __getattr__, __dir__ = lazy_exports(
        __name__, {"noema_graph.tools.registry": ("ToolRegistry",)}
    )
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return ``(__getattr__, __dir__)`` for ``package`` serving ``exports`` on first access.

    Args:
        package: The package's ``__name__``.
        exports: Module path -> the names of that module the package exports. A name listed
            under ``package`` itself is served as that submodule (``noema_graph.agents``
            exports its ``schemas`` module).

    Returns:
        The module-level ``__getattr__`` (imports the owning module at first access and
        caches the value in the package namespace) and ``__dir__`` (real and lazy names).
    """
    owner = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = owner.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module == package:
            value: Any = importlib.import_module(f"{package}.{name}")
        else:
            value = getattr(importlib.import_module(module), name)
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *owner})

    return __getattr__, __dir__


def loaded_attr(module: str, name: str) -> Any | None:
    """Return ``module.name`` if ``module`` is already imported, else None; never imports.

    An object can only be an instance of a class whose module has been imported, so
    ``isinstance`` checks against optional heavy libraries (``openai``, ``langchain_openai``)
    go through this instead of importing the library to find out it was not in use.
    """
    loaded = sys.modules.get(module)
    return None if loaded is None else getattr(loaded, name, None)
