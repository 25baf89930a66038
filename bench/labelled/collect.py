"""Collect answers of real runs into the labelled set's format (labels are added by hand).

    python bench/labelled/collect.py RESULTS.json [RESULTS.json ...] > answers.json

Each answer keeps what the scorers read: the agent, the request the model saw, the final
answer and every tool result (tool name and full observation).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def collect(path: Path) -> list[dict[str, Any]]:
    """Return one unlabelled entry per trajectory of the results file at ``path``."""
    report = json.loads(path.read_text(encoding="utf-8"))
    entries: list[dict[str, Any]] = []
    for item_id, trajectory in report["trajectories"].items():
        steps = [s for s in trajectory["steps"] if s.get("action")]
        entries.append({
            "id": f"{path.stem}/{item_id}",
            "agent": trajectory["metadata"].get("agent"),
            "request": trajectory["input"],
            "answer": trajectory["final_output"],
            "results": [[s["action"]["tool"], s.get("observation") or ""] for s in steps],
            "labels": [],
        })  # fmt: skip
    return entries


if __name__ == "__main__":
    found = [entry for name in sys.argv[1:] for entry in collect(Path(name))]
    print(json.dumps(found, indent=1, ensure_ascii=False))
