"""Score recorded runs with today's scorers, their store changes rebuilt from their calls.

    .venv/bin/python bench/rescore_recorded.py DATASET.json RECORDED.json OUT.json

RECORDED.json is a results file of ``noema-graph eval`` (its ``trajectories``), e.g. one
written before the end-state check existed. Each trajectory's successful domain calls are
made again, in order, on a fresh copy of the demo store, and what they changed becomes the
trajectory's ``store_changes``; then every item is scored as ``noema-graph eval`` scores it
and OUT.json is written in the same format (``noema-graph eval-diff`` reads it). Used where
``--model replay:`` cannot rebuild a run (the embedded model's ReAct-protocol recordings).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noema_graph.agents.domain_tools import DOMAIN_OPERATIONS
from noema_graph.cli.eval import _evaluators  # pyright: ignore[reportPrivateUsage]
from noema_graph.errors import NoemaError
from noema_graph.evals.evaluator import summarize
from noema_graph.evals.state import store_changes
from noema_graph.noema import LearningStore, write_demo_data
from noema_graph.trajectory.schema import Trajectory, load_dataset

SCORING = ("superset", "superset", "json_subset", 0.01, None)
"""The CLI's default scoring options."""


def rebuilt(trajectory: Trajectory, master: Path, work: Path) -> Trajectory:
    """Return ``trajectory`` with the store changes its successful calls make again."""
    copy = work / "copy.sqlite"
    shutil.copyfile(master, copy)
    with LearningStore.open(copy) as store:
        for step in trajectory.steps:
            action = step.action
            if action is None or step.error or action.tool not in DOMAIN_OPERATIONS:
                continue
            try:
                store.call(action.tool, **dict(action.input or {}))
            except NoemaError:
                continue
    changes = [c.model_dump() for c in store_changes(copy, master)]
    return trajectory.model_copy(
        update={"metadata": {**trajectory.metadata, "store_changes": changes}}
    )


def main(dataset: Path, recorded: Path, out: Path) -> None:
    """Rescore ``recorded`` against ``dataset``; write ``out``."""
    items = load_dataset(dataset).by_id()
    runs: dict[str, Any] = json.loads(recorded.read_text(encoding="utf-8"))["trajectories"]
    agents = {items[i].tag("agent") or "-" for i in runs if i in items}
    evaluators = _evaluators(agents, SCORING)
    results: list[dict[str, Any]] = []
    trajectories: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        master = Path(tmp) / "demo.sqlite"
        write_demo_data(master)
        for item_id, raw in runs.items():
            item = items[item_id]
            trajectory = rebuilt(Trajectory.model_validate(raw), master, Path(tmp))
            results.append(
                evaluators[item.tag("agent") or "-"].score(item, trajectory).model_dump()
            )
            trajectories[item_id] = trajectory.model_dump(mode="json")
    report = {"results": results, "trajectories": trajectories, "summary": summarize(results)}
    out.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
