"""Build ``data/claims_runs.json``: Noema agent runs with labelled answers.

Each scenario runs one Noema agent with the scripted model over a fresh demo store (real
tools, real results) and records its trajectory; each answer below is then labelled by
hand: True when it claims an effect no successful call of that run backs. Ids in answers
are read from the run (``{created}``, ``{source}``...), so the labels stay true when the
demo data changes. Run from the repository root:

    PYTHONPATH=$PWD .venv/bin/python tests/claims/build_claims_runs.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.agents import build_agent
from noema_graph.agents.learners import Learner
from noema_graph.context import RunContext
from noema_graph.evals import Trajectory, TrajectoryRecorder
from noema_graph.noema import write_demo_data
from tests.claims.claims_answers import ANSWERS
from tests.scripted import ScriptedChatModel, call, plan_reply, structured, text, tools_reply

OUT = Path(__file__).parent / "data" / "claims_runs.json"
NEW = [{"front": "Which gas makes up most of Earth's air?", "back": "Nitrogen"}]
FLAGS = [
    {"card_id": c, "issue": "flagged", "severity": "medium"}
    for c in (202, 203, 204, 205, 206, 207, 208)
]


def _scripts() -> dict[str, tuple[str, list[Any]]]:
    return {
        "create": (
            "content_generation",
            [
                plan_reply("Check duplicates and create"),
                tools_reply(call("search_cards", {"query": "nitrogen air"})),
                tools_reply(call("create_cards", {"deck_id": 2, "cards": NEW})),
                text("done"),
                structured("GeneratedCards", deck_id=2, card_ids=[209], summary="Air."),
            ],
        ),
        "create_failed": (
            "content_generation",
            [
                plan_reply("Create"),
                tools_reply(call("create_cards", {"deck_id": 99, "cards": NEW})),
                text("the deck does not exist"),
                structured("GeneratedCards", deck_id=99, card_ids=[], summary="None."),
            ],
        ),
        "governance": (
            "governance",
            [
                plan_reply("Flag problems"),
                tools_reply(call("flag_quality_issues", {})),
                text("reported"),
                structured("GovernanceReport", flagged=FLAGS, cards_scanned=208, summary="ok"),
            ],
        ),
        "flag_card": (
            "governance",
            [
                plan_reply("Flag the named card"),
                tools_reply(call("flag_card", {"card_id": 12, "reason": "ambiguous"})),
                text("reported"),
                structured("GovernanceReport", flagged=[_TWELVE], cards_scanned=0, summary="ok"),
            ],
        ),
        "unknown_tool": (
            "governance",
            [
                plan_reply("Remove the duplicate"),
                tools_reply(call("delete_card", {"card_id": 202})),
                tools_reply(call("flag_card", {"card_id": 202, "reason": "duplicate"})),
                text("reported"),
                structured("GovernanceReport", flagged=FLAGS[:1], cards_scanned=0, summary="ok"),
            ],
        ),
        "move": (
            "taxonomy_curator",
            [
                plan_reply("Move the card"),
                tools_reply(call("list_categories", {})),
                tools_reply(call("move_card", {"card_id": 5, "category_id": 7})),
                text("done"),
                structured(
                    "TaxonomyReport",
                    moves=[{"card_id": 5, "category_id": 7}],
                    suggestions=[],
                    summary="ok",
                ),
            ],
        ),
        "link": (
            "knowledge_graph",
            [
                plan_reply("Link"),
                tools_reply(call("get_concept_graph", {"concept": "Halogens", "depth": 1})),
                tools_reply(call("link_concepts", _LINK)),
                text("done"),
                structured("ConceptLinks", links=[_LINK], summary="ok"),
            ],
        ),
        "ingest": (
            "ingestion",
            [
                plan_reply("Ingest and read back"),
                tools_reply(call("ingest_text", {"title": "Tides", "text": _TIDES})),
                tools_reply(call("get_chunks", {"source_id": 2})),
                text("done"),
                structured(
                    "IngestionReport", source_id=2, chunk_count=1, key_concepts=[], summary="ok"
                ),
            ],
        ),
        "due": (
            "learning",
            [
                plan_reply("List due cards"),
                tools_reply(call("list_due_cards", {"user_id": 2, "limit": 5})),
                text("read"),
                structured("NextCard", card_id=73, reason="first", expected_recall=0.4),
            ],
        ),
        "calibration": (
            "calibration",
            [
                plan_reply("Measure"),
                tools_reply(call("compute_calibration", {"user_id": 2})),
                text("read"),
                structured("CalibrationAdvice", brier=0.163, ece=0.119, bias=0.119, advice="x"),
            ],
        ),
        "tutor": (
            "socratic_tutor",
            [
                plan_reply("Read the card"),
                tools_reply(call("get_card", {"card_id": 5})),
                text("read"),
                structured(
                    "SocraticTurn",
                    question="Which city?",
                    concept="Spain",
                    hint="h",
                    understanding="partial",
                ),
            ],
        ),
    }


_TWELVE = {"card_id": 12, "issue": "ambiguous", "severity": "medium"}
_LINK = {"source": "Halogens", "target": "Alkali metals", "kind": "contrasts_with"}
_TIDES = "The Moon's gravity pulls the oceans and raises two tidal bulges."


def _run(agent: str, script: list[Any], folder: Path, name: str) -> Trajectory:
    db = folder / f"{name}.sqlite"
    write_demo_data(db)
    model = ScriptedChatModel(script=list(script))
    graph = build_agent(agent, model=model, db=db, checkpointer=InMemorySaver())
    learner = Learner(2, "ben")
    state = graph.invoke(
        {"messages": [("user", "Please help.")]},
        {"configurable": {"thread_id": name}},
        context=RunContext(user_id=learner.name),
    )
    model.assert_complete()
    return TrajectoryRecorder.from_state(state)


def main() -> None:
    """Run every scenario and write the labelled examples."""
    runs: dict[str, Any] = {}
    examples: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (agent, script) in _scripts().items():
            runs[name] = _run(agent, script, Path(tmp), name).model_dump(mode="json")
    for name, answers in ANSWERS.items():
        for i, (answer, label, note) in enumerate(answers, 1):
            examples.append(
                {
                    "id": f"run-{name}-{i:02d}",
                    "run": name,
                    "answer": answer,
                    "hallucinated": label,
                    "note": note,
                }
            )
    OUT.write_text(json.dumps({"runs": runs, "examples": examples}, indent=1) + "\n")
    print(f"{len(examples)} examples, {sum(e['hallucinated'] for e in examples)} positive")


if __name__ == "__main__":
    main()
