"""Moved modules keep their old import path for one release, with a DeprecationWarning.

The public paths (``noema_graph.inspect``, ``noema_graph.persistence``, ``noema_graph.evals``,
``from noema_graph import ...``) stay and do not warn; ``noema_graph.compact_serde`` stays for
good without a warning, because stored checkpoints name it.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

MOVED = [
    ("noema_graph.backends", "noema_graph.storage.backends"),
    ("noema_graph.sqlite_savers", "noema_graph.storage.sqlite.savers"),
    ("noema_graph.sqlite_delta", "noema_graph.storage.sqlite.delta"),
    ("noema_graph.sqlite_writer", "noema_graph.storage.sqlite.writer"),
    ("noema_graph.sqlite_stores", "noema_graph.storage.sqlite.stores"),
    ("noema_graph.linked_writes", "noema_graph.storage.sqlite.linked_writes"),
    ("noema_graph.retention", "noema_graph.storage.sqlite.retention"),
    ("noema_graph.damage", "noema_graph.storage.sqlite.damage"),
    ("noema_graph.doctor", "noema_graph.storage.sqlite.doctor"),
    ("noema_graph.recover", "noema_graph.storage.sqlite.recover"),
    ("noema_graph.liveness", "noema_graph.storage.sqlite.liveness"),
    ("noema_graph.side_tables", "noema_graph.storage.side_tables"),
    ("noema_graph.lease", "noema_graph.storage.lease"),
    ("noema_graph.pg_savers", "noema_graph.storage.postgres.savers"),
    ("noema_graph.pg_inspect", "noema_graph.storage.postgres.inspect"),
    ("noema_graph.retention_pg", "noema_graph.storage.postgres.retention"),
    ("noema_graph.doctor_pg", "noema_graph.storage.postgres.doctor"),
    ("noema_graph.nodes.ledger", "noema_graph.storage.ledger"),
    ("noema_graph.observability.eventlog", "noema_graph.storage.sqlite.eventlog"),
    ("noema_graph.observability.pg_eventlog", "noema_graph.storage.postgres.eventlog"),
    ("noema_graph.noema.driver", "noema_graph.storage.sql.driver"),
    ("noema_graph.noema.dialect", "noema_graph.storage.sql.dialect"),
    ("noema_graph.noema.connections", "noema_graph.storage.sql.connections"),
    ("noema_graph.cli_runs", "noema_graph.cli.runs"),
    ("noema_graph.cli_live", "noema_graph.cli.live"),
    ("noema_graph.cli_errors", "noema_graph.cli.errors"),
    ("noema_graph.cli_model", "noema_graph.cli.model"),
    ("noema_graph.cli_db", "noema_graph.cli.db"),
    ("noema_graph.cli_cancel", "noema_graph.cli.cancel"),
    ("noema_graph.doctor_cli", "noema_graph.cli.doctor"),
    ("noema_graph.inspect_cli", "noema_graph.cli.inspect"),
    ("noema_graph.evals.claims", "noema_graph.claims"),
    ("noema_graph.evals.runtime", "noema_graph.claims.check"),
    ("noema_graph.evals.trajectory", "noema_graph.trajectory.schema"),
    ("noema_graph.evals.steps", "noema_graph.trajectory.steps"),
    ("noema_graph.tools.schemas", "noema_graph.schemas"),
    ("noema_graph.tools.mcp_server", "noema_graph.agents.mcp_server"),
]


@pytest.mark.parametrize(("old", "new"), MOVED)
def test_an_old_path_warns_and_gives_the_new_module_s_names(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        alias = importlib.import_module(old)
    moved = importlib.import_module(new)
    public = getattr(moved, "__all__", [n for n in vars(moved) if not n.startswith("_")])
    assert public
    assert all(getattr(alias, name) is getattr(moved, name) for name in public)


@pytest.mark.parametrize(
    "path",
    [
        "noema_graph.inspect",
        "noema_graph.persistence",
        "noema_graph.evals",
        "noema_graph.compact_serde",
    ],
)
def test_public_paths_do_not_warn(path: str) -> None:
    sys.modules.pop(path, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        module = importlib.import_module(path)
    assert module.__doc__
