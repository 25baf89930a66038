"""``noema-graph eval`` end to end, in a real process, on recorded scripted runs.

Scripted runs of five Noema tasks are recorded first (real tools over the demo store, two
of them deliberately wrong); the command then replays them (``--model replay:FILE``) over
fresh copies of the store, scores them and writes the results; a second run resumes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from noema_graph.cli.eval import default_out, round_robin
from noema_graph.evals import NOEMA_TASKS, load_dataset, run_item
from noema_graph.noema import DemoSummary
from tests.scripted import ScriptedChatModel, call, plan_reply, structured, text, tools_reply

ROOT = Path(__file__).resolve().parents[2]
PRICES = {"price_overrides": {"scripted": (1.0, 2.0)}}
NEW = [{"front": "Which group are the noble gases?", "back": "Group 18"}]


def _scripts(gold: dict[str, Any]) -> dict[str, list[Any]]:
    flagged = [
        {**f, "issue": "flagged", "severity": "medium"} for f in gold["governance-1"]["flagged"]
    ]
    calibration = gold["calibration-2"]
    return {
        "learning-2": [
            plan_reply("Pick"),
            tools_reply(call("list_due_cards", {"user_id": 2, "limit": 5})),
            text("the first card"),
            structured("NextCard", card_id=73, reason="most overdue", expected_recall=0.4),
        ],
        "calibration-2": [
            plan_reply("Measure"),
            tools_reply(call("compute_calibration", {"user_id": 2})),
            text("measured"),
            structured("CalibrationAdvice", **calibration, advice="Rate lower."),
        ],
        "governance-1": [  # right flags, but the summary claims a deletion
            plan_reply("Flag"),
            tools_reply(call("flag_quality_issues", {})),
            text("flagged"),
            structured(
                "GovernanceReport",
                flagged=flagged,
                cards_scanned=gold["governance-1"]["cards_scanned"],
                summary="I flagged the problems and deleted card 202.",
            ),
        ],
        "content_generation-1": [
            plan_reply("Create"),
            tools_reply(call("search_cards", {"query": "noble"})),
            tools_reply(call("create_cards", {"deck_id": 2, "cards": NEW * 2})),
            text("created"),
            structured("GeneratedCards", deck_id=2, card_ids=[209, 210], summary="Noble gases."),
        ],
        "taxonomy_curator-1": [  # moves the card into the wrong category
            plan_reply("Move"),
            tools_reply(call("list_categories", {})),
            tools_reply(call("move_card", {"card_id": 5, "category_id": 8})),
            text("moved"),
            structured(
                "TaxonomyReport",
                moves=[{"card_id": 5, "category_id": 8}],
                suggestions=[],
                summary="Moved.",
            ),
        ],
    }


@pytest.fixture(scope="module")
def recorded(demo_master: DemoSummary, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Record the five scripted runs; return the folder with dataset.json and runs.json."""
    folder = tmp_path_factory.mktemp("eval")
    items = load_dataset(NOEMA_TASKS).by_id()
    gold = {k: v.expected_output for k, v in items.items()}
    trajectories = {}
    for item_id, script in _scripts(gold).items():
        model = ScriptedChatModel(script=script)
        trajectory = run_item(
            items[item_id], agent=items[item_id].tag("agent") or "", model=model,
            master=Path(demo_master.path), workdir=folder, overrides=PRICES,
        )  # fmt: skip
        model.assert_complete()
        assert "run_error" not in trajectory.metadata, trajectory.metadata
        trajectories[item_id] = trajectory.model_dump(mode="json")
    dataset = {"dataset": [items[i].model_dump() for i in trajectories]}
    (folder / "dataset.json").write_text(json.dumps(dataset))
    (folder / "runs.json").write_text(json.dumps({"trajectories": trajectories}))
    return folder


def _eval(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-c", "from noema_graph.cli.app import main; main()", "eval",
        str(folder / "dataset.json"), "--model", f"replay:{folder / 'runs.json'}",
        "--out", str(folder / "results.json"), *args,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=300
    )


def test_eval_scores_replayed_runs_and_resumes(recorded: Path) -> None:
    done = _eval(recorded, "--agent", "all")
    assert done.returncode == 0, done.stderr
    report = json.loads((recorded / "results.json").read_text())
    results = {r["id"]: r for r in report["results"]}
    assert set(results) == set(json.loads((recorded / "runs.json").read_text())["trajectories"])
    for right in ("learning-2", "calibration-2", "content_generation-1"):
        assert results[right]["final_score"] == 1.0, results[right]
        assert results[right]["trajectory_score"] == 1.0
        assert results[right]["hallucinated_actions"] == []
    wrong = results["taxonomy_curator-1"]
    assert wrong["final_score"] < 1.0 and wrong["trajectory_score"] == 0.0
    assert (wrong["tool_precision"], wrong["tool_recall"]) == (0.5, 0.5)
    lying = results["governance-1"]
    assert lying["final_score"] == 1.0
    assert [h["action"] for h in lying["hallucinated_actions"]] == ["delete"]
    # the wrong move is refused before it runs (the request names category Geography, not
    # 8): the answer that reports it is a second hallucination
    assert [h["action"] for h in wrong["hallucinated_actions"]] == ["move"]
    assert report["summary"]["items"] == 5 and report["summary"]["hallucinations"] == 2
    assert set(report["trajectories"]) == set(results)
    for name in ("learning", "governance", "taxonomy_curator", "all", "halluc", "80% (4)"):
        assert name in done.stderr

    report["results"] = [r for r in report["results"] if r["id"] != "learning-2"]
    (recorded / "results.json").write_text(json.dumps(report))
    resumed = _eval(recorded, "--agent", "all")
    assert resumed.returncode == 0, resumed.stderr
    assert "4 items already scored" in resumed.stderr
    again = json.loads((recorded / "results.json").read_text())["results"]
    assert sorted(r["id"] for r in again) == sorted(results)
    assert {r["id"]: r for r in again}["learning-2"]["final_score"] == 1.0


def test_eval_runs_one_agent_and_names_bad_input(recorded: Path) -> None:
    (recorded / "results.json").unlink(missing_ok=True)
    only = _eval(recorded, "--agent", "learning")
    assert only.returncode == 0, only.stderr
    results = json.loads((recorded / "results.json").read_text())["results"]
    assert [r["id"] for r in results] == ["learning-2"]
    bad = _eval(recorded, "--agent", "all", "--trajectory-match", "loose")
    assert bad.returncode == 2 and "trajectory_match" in bad.stderr


def test_eval_without_out_saves_to_a_stable_path_and_prints_it(
    recorded: Path, tmp_path: Path
) -> None:
    command = [
        sys.executable, "-c", "from noema_graph.cli.app import main; main()", "eval",
        str(recorded / "dataset.json"), "--model", f"replay:{recorded / 'runs.json'}",
        "--limit", "3",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    expected = Path("eval-results") / "dataset--replay-runs.json"
    assert f"results: {expected}" in done.stderr
    assert "pass" in done.stderr and "100% (3)" in done.stderr
    results = json.loads((tmp_path / expected).read_text())["results"]
    agents = [r["agent"] for r in results]
    assert len(agents) == 3 and len(set(agents)) == 3  # one item of each of three agents
    assert all(r["input"] and "final_output" in r and "errors" in r for r in results)


def test_default_out_and_round_robin() -> None:
    env = {"NOEMA_MODEL": "openai:gpt-4o-mini"}
    path = default_out(Path("sets/my tasks.json"), None, env)
    assert path == Path("eval-results/my-tasks--openai-gpt-4o-mini.json")
    assert default_out(Path("d.json"), "local", env) == Path("eval-results/d--local.json")
    items = ["a1", "a2", "a3", "b1", "c1", "c2"]
    assert round_robin(items, 4, lambda i: i[0]) == ["a1", "a2", "b1", "c1"]
    assert round_robin(items, None, lambda i: i[0]) == items


def test_eval_help_names_the_model_default() -> None:
    command = [
        sys.executable,
        "-c",
        "from noema_graph.cli.app import main; main()",
        "eval",
        "--help",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    words = " ".join(done.stdout.replace("\u2502", " ").split())
    assert "default: NOEMA_MODEL" in words and "else the embedded local model" in words
