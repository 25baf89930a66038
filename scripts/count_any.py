"""Count the uses of ``Any`` in a package's annotations, by subpackage (stdlib only).

Counted: annotations of parameters and returns, annotated assignments, names inside string
annotations, and every use (and the definition) of a module-level alias whose value
mentions ``Any``. Usage: ``python scripts/count_any.py [PACKAGE_DIR]`` (default
``noema_graph``); prints the total, then one line per subpackage (``(top)`` for the
package's own modules).
"""

from __future__ import annotations

import ast
import collections
import pathlib
import sys


def _mentions_any(node: ast.AST) -> bool:
    return any(
        (isinstance(s, ast.Name) and s.id == "Any")
        or (isinstance(s, ast.Attribute) and s.attr == "Any")
        for s in ast.walk(node)
    )


def _alias(node: ast.stmt) -> tuple[str, ast.expr] | None:
    """Return the name and value of a module-level alias statement, else None."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return node.targets[0].id, node.value
    if (
        isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.value is not None
        and isinstance(node.annotation, ast.Name | ast.Attribute)
        and getattr(node.annotation, "id", getattr(node.annotation, "attr", "")) == "TypeAlias"
    ):
        return node.target.id, node.value
    type_alias = getattr(ast, "TypeAlias", None)
    if type_alias is not None and isinstance(node, type_alias):
        return node.name.id, node.value
    return None


def any_aliases(tree: ast.Module) -> set[str]:
    """Return the module-level aliases of ``tree`` whose value mentions ``Any``."""
    names: set[str] = set()
    for node in tree.body:
        alias = _alias(node)
        if alias is not None and _mentions_any(alias[1]):
            names.add(alias[0])
    return names


def _annotations(node: ast.AST, aliases: set[str]) -> list[ast.expr]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        found = [p.annotation for p in params if p.annotation is not None]
        return [*found, node.returns] if node.returns is not None else found
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in aliases
    ):
        return [node.value]  # the alias definition itself
    return []


def count(path: pathlib.Path) -> int:
    """Return the uses of ``Any`` (and of its aliases) in the annotations of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = any_aliases(tree)
    names = {"Any"} | aliases
    total = 0
    for node in ast.walk(tree):
        for annotation in _annotations(node, aliases):
            for s in ast.walk(annotation):
                if (isinstance(s, ast.Name) and s.id in names) or (
                    isinstance(s, ast.Attribute) and s.attr == "Any"
                ):
                    total += 1
                elif isinstance(s, ast.Constant) and isinstance(s.value, str):
                    total += sum(s.value.count(name) for name in names)
    return total


def count_package(root: pathlib.Path) -> collections.Counter[str]:
    """Return the counts of the package at ``root``, by subpackage (``(top)``: its modules)."""
    counts: collections.Counter[str] = collections.Counter()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        counts[parts[0] if len(parts) > 1 else "(top)"] += count(path)
    return counts


def main(argv: list[str]) -> int:
    """Print the total and the count of each subpackage."""
    root = pathlib.Path(argv[1] if len(argv) > 1 else "noema_graph")
    counts = count_package(root)
    print("total", sum(counts.values()))
    for name, n in counts.most_common():
        print(f"{n:6d} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
