"""Persistent memory survives the process: one subprocess writes a SQLite file, another reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WRITER = """
import sys
from noema_graph.persistence import sqlite_store
from noema_graph.memory import MemoryManager, persist_run
with sqlite_store(sys.argv[1]) as store:
    m = MemoryManager(store, user_id="u1", agent="helper", thread_id="thread-A")
    m.store("pref", "The user prefers metric units", "fact", "persistent")
    m.store("scratch", "working note about metric conversion", "observation", "working")
    assert persist_run(store, user_id="u1", agent="helper", thread_id="thread-A",
                       request="convert 5 miles", result="8.05 km",
                       observations=["looked up the mile to km factor"]) is None
"""

READER = """
import json, sys
from noema_graph.persistence import sqlite_store
from noema_graph.memory import recall_context
with sqlite_store(sys.argv[1]) as store:
    hits, unavailable = recall_context(store, user_id="u1", agent="helper",
                                       thread_id="thread-B", query="metric units km", limit=5)
print(json.dumps({"keys": [h.entry.key for h in hits], "tiers": [h.entry.tier for h in hits],
                  "unavailable": unavailable is not None}))
"""


def _run(script: str, path: Path) -> str:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_persistent_memory_survives_processes_and_threads(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    _run(WRITER, path)
    found = json.loads(_run(READER, path).strip().splitlines()[-1])
    assert found["unavailable"] is False
    assert "pref" in found["keys"]
    assert any(k.startswith("run-") for k in found["keys"])
    # thread-B does not see thread-A's working memory
    assert "scratch" not in found["keys"]
    assert set(found["tiers"]) == {"persistent"}
