"""The labelled set of the words and leak scorers: answers of real runs, labelled by hand.

``data/labelled_answers.json`` holds answers of the embedded model's runs on the task set
and on requests unlike it (collected by ``bench/labelled/collect.py``), and answers with a
planted case (a leak in each field, an invented or a derived number, a copied example, an
invented entry or name), each with every tool result the run had. A label is
``[kind, field]``: ``number``, ``entry``, ``name``, ``example`` or ``leak``, and the answer
field it is in. Precision and recall count (answer, kind, field) triples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from noema_graph.agents import default_registry
from noema_graph.evals.leaks import answer_leaks
from noema_graph.evals.words import example_phrases, ungrounded_words
from noema_graph.trajectory.schema import StepAction, Trajectory, TrajectoryStep

DATA = Path(__file__).parent / "data" / "labelled_answers.json"
Triple = tuple[str, str, str]


@dataclass
class Score:
    """The confusion counts over the set, and the triples that went wrong."""

    answers: int = 0
    true_positive: int = 0
    false_positive: list[Triple] = field(default_factory=list[Triple])
    false_negative: list[Triple] = field(default_factory=list[Triple])

    @property
    def precision(self) -> float:
        """Return TP / (TP + FP) (1.0 when nothing was found)."""
        found = self.true_positive + len(self.false_positive)
        return self.true_positive / found if found else 1.0

    @property
    def recall(self) -> float:
        """Return TP / (TP + FN) (1.0 when nothing is labelled)."""
        labelled = self.true_positive + len(self.false_negative)
        return self.true_positive / labelled if labelled else 1.0


@cache
def _agent(name: str) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...]]:
    """Return (secret fields, example phrases) of agent ``name``."""
    registry = default_registry()
    definition = registry.get(name)
    prompt = registry.prompts.get(definition.prompt, definition.prompt_version)
    phrases = example_phrases([example.answer for example in prompt.examples])
    return dict(definition.secret_fields), tuple(phrases)


def trajectory_of(entry: dict[str, Any]) -> Trajectory:
    """Return the run an entry stands for: its request, tool results and answer."""
    steps = [
        TrajectoryStep(action=StepAction(tool=tool, input={}), observation=observation)
        for tool, observation in entry["results"]
    ]
    return Trajectory(input=entry["request"], final_output=entry["answer"], steps=steps)


def found_triples(entry: dict[str, Any]) -> set[tuple[str, str]]:
    """Return the (kind, field) pairs both scorers find in the entry's answer."""
    secrets, examples = _agent(entry["agent"])
    run = trajectory_of(entry)
    words = {(w.kind, w.field) for w in ungrounded_words(run, examples=examples)}
    return words | {("leak", leak.field) for leak in answer_leaks(run, secrets)}


def load() -> list[dict[str, Any]]:
    """Return the labelled answers."""
    return json.loads(DATA.read_text(encoding="utf-8"))


def score(entries: list[dict[str, Any]] | None = None) -> Score:
    """Return the scorers' confusion counts over the labelled set."""
    result = Score()
    for entry in entries if entries is not None else load():
        gold = {(kind, where) for kind, where in entry["labels"]}
        found = found_triples(entry)
        result.answers += 1
        result.true_positive += len(gold & found)
        result.false_positive += [(entry["id"], *t) for t in sorted(found - gold)]
        result.false_negative += [(entry["id"], *t) for t in sorted(gold - found)]
    return result
