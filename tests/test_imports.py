"""Importing the package, its graphs or the CLI's help loads no model client, server or MCP stack.

Each check runs in a fresh interpreter, so what earlier tests imported does not count. Import
time itself is measured in ``bench/bench_import.py``, never asserted here.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "langchain_openai", "uvicorn", "mcp", "langchain_mcp_adapters", "xllamacpp")
CLI_HELP = (
    "import sys\n"
    "sys.argv = ['noema-graph', *ARGS]\n"
    "from noema_graph.cli.app import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exit:\n"
    "    assert not exit.code, exit.code\n"
)
SUBMODULE_EXPORTS = {"schemas"}
"""Exports that are submodules on purpose (``noema_graph.agents.schemas``)."""
LAZY_PACKAGES = (
    "noema_graph",
    "noema_graph.agents",
    "noema_graph.cli",
    "noema_graph.memory",
    "noema_graph.models",
    "noema_graph.noema",
    "noema_graph.observability",
    "noema_graph.state",
    "noema_graph.tools",
)


def run_fresh(code: str) -> tuple[str, set[str]]:
    """Run ``code`` in a fresh interpreter; return its stdout and the heavy modules it loaded."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "TERM": "dumb"}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    *output, loaded = done.stdout.rstrip("\n").split("\n")
    return "\n".join(output), set(json.loads(loaded))


@pytest.mark.parametrize(
    "code",
    [
        "import noema_graph",
        "import noema_graph.graphs",
        "from noema_graph import AgentConfig, build_agent_graph, run_agent",
        "import noema_graph.tools, noema_graph.models, noema_graph.agents, noema_graph.memory",
        "from noema_graph.tools import MCPToolProvider, toolkits_for",
    ],
)
def test_importing_loads_no_heavy_client(code: str) -> None:
    _, loaded = run_fresh(code)
    assert loaded == set()


def test_import_noema_graph_alone_loads_only_the_package() -> None:
    _, loaded = run_fresh(
        "import noema_graph, sys\n"
        "assert 'langgraph' not in sys.modules and 'langchain_core' not in sys.modules"
    )
    assert loaded == set()


def test_cli_help_lists_every_command_without_loading_graphs() -> None:
    out, loaded = run_fresh(
        "ARGS = ['--help']\n"
        f"{CLI_HELP}"
        "assert 'noema_graph.graphs' not in sys.modules, 'the help built a graph module'\n"
        "assert 'langgraph' not in sys.modules, 'the help imported langgraph'"
    )
    assert loaded == set()
    for command in ("run", "ask", "resume", "prune", "demo-data", "agents", "mcp", "stats"):
        assert command in out
    assert "events" in out and "--log-json" in out


def test_command_help_keeps_its_options() -> None:
    out, loaded = run_fresh(f"ARGS = ['run', '--help']\n{CLI_HELP}")
    assert loaded == set()
    for option in ("--model", "--db", "--thread", "--user", "--data", "--confirm", "--yes"):
        assert option in out
    assert "noema-learning.sqlite" in out  # the --data default, from noema.schema


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_exports_resolve_to_the_real_objects(package: str) -> None:
    module = importlib.import_module(package)
    for info in pkgutil.iter_modules(module.__path__):
        if info.name in module.__all__:  # a submodule of an export's name would shadow it
            importlib.import_module(f"{package}.{info.name}")
            shadowed = isinstance(getattr(module, info.name), ModuleType)
            assert not shadowed or info.name in SUBMODULE_EXPORTS, f"{package}.{info.name}"
    for name in module.__all__:
        value = getattr(module, name)
        assert value is not None, f"{package}.{name}"
        assert name in dir(module)
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = module.no_such_name


def test_lazy_export_is_the_same_object_as_its_module_attribute() -> None:
    import noema_graph
    import noema_graph.tools
    from noema_graph.graphs.agent import build_agent_graph
    from noema_graph.tools.mcp_provider import MCPToolProvider

    assert noema_graph.build_agent_graph is build_agent_graph
    assert noema_graph.tools.MCPToolProvider is MCPToolProvider


def _stated_exports(package: str) -> tuple[dict[str, str], dict[str, str]]:
    """Return a package's TYPE_CHECKING imports and its lazy map, each as name -> module."""
    source = (ROOT / package.replace(".", "/") / "__init__.py").read_text(encoding="utf-8")
    checked: dict[str, str] = {}
    served: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                assert statement.level == 0 and statement.module, ast.unparse(statement)
                for alias in statement.names:
                    assert alias.asname is None, ast.unparse(statement)
                    checked[alias.name] = statement.module
        elif isinstance(node, ast.Assign) and "lazy_exports" in ast.unparse(node.value):
            assert isinstance(node.value, ast.Call)
            exports: dict[str, tuple[str, ...]] = ast.literal_eval(node.value.args[1])
            served |= {name: module for module, names in exports.items() for name in names}
    return checked, served


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_the_lazy_map_and_the_type_checking_imports_agree(package: str) -> None:
    module = importlib.import_module(package)
    checked, served = _stated_exports(package)
    assert served == checked, package
    eager = {name for name in module.__all__ if name in vars(module) and name not in served}
    assert set(served) == set(module.__all__) - eager, package
    assert all(owner.startswith("noema_graph") for owner in served.values())


def test_value_models_and_events_load_without_langgraph() -> None:
    _, loaded = run_fresh(
        "import noema_graph.state.models, noema_graph.events, sys\n"
        "assert 'langgraph' not in sys.modules, 'state/__init__ imported the graph schemas'"
    )
    assert loaded == set()
