"""Write the Aegra config of one server: langgraph.json's graphs, plus noema's custom app.

Usage: python deploy/aegra_config.py OUT.json   (deploy/serve.sh runs it at every start)

The graphs and dependencies come from the checkout's ``langgraph.json``, so a graph added
there is served by every server started (or restarted) after the change: Aegra loads its
graphs once, at start. Paths become absolute, so the file may live anywhere. ``http.app``
adds ``deploy/aegra_app.py``: noema's checkpoint serializer and the heartbeat that ends the
runs of a server that died.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def absolute(spec: str) -> str:
    """Return a ``./file.py:name`` graph spec with the file's absolute path."""
    path, _, name = spec.rpartition(":")
    if not path.endswith(".py"):
        return spec  # a module path (package.module:name) resolves through PYTHONPATH
    return f"{(ROOT / path).resolve()}:{name}"


def config(manifest: dict[str, object]) -> dict[str, object]:
    """Return Aegra's config for the project manifest ``manifest`` (langgraph.json's)."""
    graphs = manifest.get("graphs")
    if not isinstance(graphs, dict) or not graphs:
        raise SystemExit("langgraph.json: 'graphs' must name at least one graph")
    dependencies = manifest.get("dependencies") or ["."]
    assert isinstance(dependencies, list)
    return {
        **manifest,
        "graphs": {str(k): absolute(str(v)) for k, v in graphs.items()},
        "dependencies": [str((ROOT / str(d)).resolve()) for d in dependencies],
        "http": {"app": f"{ROOT / 'deploy' / 'aegra_app.py'}:app"},
    }


def main() -> None:
    """Write the config to the path given as the only argument."""
    if len(sys.argv) != 2:
        raise SystemExit("usage: python deploy/aegra_config.py OUT.json")
    manifest = json.loads((ROOT / "langgraph.json").read_text())
    Path(sys.argv[1]).write_text(json.dumps(config(manifest), indent=2) + "\n")


if __name__ == "__main__":
    main()
