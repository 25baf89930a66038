"""The manual's code: every Python block of README.md and docs/ runs in a test or says why not.

A block that runs is listed in ``RUN`` with the test that executes it. A block that cannot
run as written (placeholders such as ``...`` or ``m``, a server it names) has the line
``<!-- not run: REASON -->`` just above its fence: it is still parsed, and every name it
imports or reads from ``noema_graph`` must exist. ``scripts/test.sh`` builds the manual with
``mkdocs build --strict`` (broken links and docstrings fail there).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from tests.doc_pages import ROOT, Block, blocks, pages, read, section

# (page, heading the block sits under, language) -> the test that executes it
RUN = {
    ("README.md", "## Your first five minutes", "python"): (
        "tests/integration/test_readme.py::test_quick_start_answers_five_on_a_scripted_model"
    ),
    ("docs/getting-started.md", "## Quick start (Python)", "python"): (
        "tests/integration/test_readme.py::test_quick_start_answers_five_on_a_scripted_model"
    ),
    ("docs/postgres.md", "# Scale out (PostgreSQL, phase 1)", "python"): (
        "tests/storage/test_runs_postgres.py::"
        "test_the_manuals_open_backend_block_builds_a_graph_on_postgres"
    ),
    ("docs/cli.md", "# Command line", "python"): (
        "tests/cli/test_model_hook.py::test_the_docs_example_runs_the_cli_on_your_model"
    ),
    ("docs/evaluation.md", "# Evaluation", "json"): (
        "tests/evals/test_expectations.py::"
        "test_the_docs_example_of_each_kind_loads_against_the_demo_store"
    ),
}


def _python_blocks() -> list[Block]:
    return [b for page in pages() for b in blocks(page) if b.lang == "python"]


def test_every_python_block_runs_in_a_test_or_says_why_not() -> None:
    found = _python_blocks()
    assert len(found) >= 10, found  # README's quick start and the manual's examples
    unclaimed = [
        f"{b.page}:{b.line} under {b.heading!r}"
        for b in found
        if not b.not_run and (b.page, b.heading, b.lang) not in RUN
    ]
    assert unclaimed == [], (
        "run these blocks in a test and list them in RUN, or put "
        "'<!-- not run: REASON -->' on the line above the fence"
    )


def test_the_tests_that_run_blocks_exist() -> None:
    everything = [(b.page, b.heading, b.lang) for page in pages() for b in blocks(page)]
    for key, test in RUN.items():
        assert everything.count(key) >= 1, f"{key}: no such block (moved? update RUN)"
        path, name = test.split("::")
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), test
        run = [b for page in pages() for b in blocks(page) if (b.page, b.heading, b.lang) == key]
        assert not any(b.not_run for b in run), f"{key} is run by {test}: drop its marker"


def _noema_names(tree: ast.Module) -> list[tuple[str, str]]:
    """Return (module, name) for each name the code imports or reads from noema_graph."""
    names: list[tuple[str, str]] = []
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("noema_graph"):
            names += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("noema_graph"):
                    modules[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        name = node.value if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.Attribute) and isinstance(name, ast.Name) and name.id in modules:
            names.append((modules[name.id], node.attr))
    return names


@pytest.mark.parametrize("found", _python_blocks(), ids=lambda b: f"{b.page}:{b.line}")
def test_every_python_block_parses_and_names_what_exists(found: Block) -> None:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(found.code, f"{found.page}:{found.line}", "exec", flags)
    assert isinstance(tree, ast.Module)
    for module, name in _noema_names(tree):
        assert hasattr(importlib.import_module(module), name), (
            f"{found.page}:{found.line} uses {module}.{name}, which does not exist"
        )


def test_the_package_map_has_a_row_for_every_subpackage() -> None:
    table = section("README.md", "## Package map")
    package = ROOT / "noema_graph"
    missing = [
        f"{init.parent.relative_to(package)}/"
        for init in sorted(package.rglob("__init__.py"))
        if init.parent != package and f"`{init.parent.relative_to(package)}/`" not in table
    ]
    assert missing == [], "add a row to README's package map for each"


def test_every_page_is_in_the_manual() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    docs = ROOT / "docs"
    missing = [str(p.relative_to(docs)) for p in sorted(docs.rglob("*.md"))]
    missing = [name for name in missing if f" {name}" not in nav]
    assert missing == [], "list these pages under nav: in mkdocs.yml"


def test_readme_stays_short() -> None:
    lines = Path(ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 200, f"README.md has {lines} lines; move the detail to a page of docs/"


def test_readme_links_reach_files() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", read("README.md"))
    assert any(t.startswith("docs/") for t in targets), targets
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert missing == [], "README.md links to files that do not exist"
