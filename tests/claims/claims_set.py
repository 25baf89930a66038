"""The labelled set of the hallucinated-action detector: hand-written and from Noema runs.

``data/claims_hand.json`` holds tool contexts (lists of calls with their real-shaped results)
and answers labelled by hand; ``data/claims_runs.json`` holds trajectories recorded from
scripted Noema agent runs over the demo store (real tools, real results), each with a
labelled answer. Built by ``tests/claims/build_claims_runs.py``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noema_graph.evals import StepAction, Trajectory, TrajectoryStep, hallucinated_actions

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Labelled:
    """One example: a trajectory and whether it claims an unbacked effect."""

    id: str
    trajectory: Trajectory
    hallucinated: bool
    note: str


def _step(entry: dict[str, Any]) -> TrajectoryStep:
    if "thought" in entry:
        return TrajectoryStep(thought=entry["thought"])
    output = entry.get("output")
    return TrajectoryStep(
        action=StepAction(tool=entry["tool"], input=entry["input"]),
        observation=json.dumps(output) if output is not None else entry.get("error"),
        error=entry.get("error"),
    )


def _hand() -> list[Labelled]:
    raw = json.loads((DATA / "claims_hand.json").read_text())
    out: list[Labelled] = []
    for example in raw["examples"]:
        steps = example.get("steps") or raw["contexts"][example["context"]]
        trajectory = Trajectory(
            input="", final_output=example["answer"], steps=[_step(s) for s in steps]
        )
        out.append(Labelled(example["id"], trajectory, example["hallucinated"], example["note"]))
    return out


def _runs() -> list[Labelled]:
    path = DATA / "claims_runs.json"
    if not path.exists():
        return []
    raw = json.loads(path.read_text())
    trajectories = {k: Trajectory.model_validate(v) for k, v in raw["runs"].items()}
    return [
        Labelled(
            e["id"],
            trajectories[e["run"]].model_copy(update={"final_output": e["answer"]}),
            e["hallucinated"],
            e["note"],
        )
        for e in raw["examples"]
    ]


def labelled_set() -> list[Labelled]:
    """Return every labelled example."""
    return [*_hand(), *_runs()]


def detector_score(examples: Sequence[Labelled]) -> tuple[float, float, list[Labelled]]:
    """Return (precision, recall, misjudged examples) of the detector on ``examples``."""
    tp = fp = fn = 0
    wrong: list[Labelled] = []
    for example in examples:
        found = bool(hallucinated_actions(example.trajectory))
        tp += found and example.hallucinated
        fp += found and not example.hallucinated
        fn += example.hallucinated and not found
        if found != example.hallucinated:
            wrong.append(example)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), wrong
