"""``eval`` on the CLI's model hook, ``--fail-under``, an unknown user, and ``eval-diff``.

In process, through ``main(argv, model_factory=...)``: a scripted model answers one item
right, a second item names a learner the store lacks (that item fails, the eval goes on).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from noema_graph.cli import main
from noema_graph.evals import NOEMA_TASKS, load_dataset
from tests.scripted import ScriptedChatModel, call, plan_reply, structured, text, tools_reply


def _main(argv: list[str], **hook: Any) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv, **hook)
    return int(exited.value.code or 0)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    item = load_dataset(NOEMA_TASKS).by_id()["learning-2"].model_dump()
    stranger = {**item, "id": "learning-stranger", "tags": ["agent:learning", "user:nobody"]}
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"dataset": [item, stranger]}))
    return path


def _scripted(seen: list[str | None]) -> Any:
    def factory(spec: str | None) -> ScriptedChatModel:
        seen.append(spec)
        return ScriptedChatModel(
            script=[
                plan_reply("Pick"),
                tools_reply(call("list_due_cards", {"user_id": 2, "limit": 5})),
                text("the first card"),
                structured("NextCard", card_id=73, reason="most overdue", expected_recall=0.4),
            ]
        )

    return factory


def test_eval_runs_on_the_hook_model_and_an_unknown_user_fails_only_its_item(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str | None] = []
    out = tmp_path / "results.json"
    argv = ["eval", str(dataset), "--model", "my-spec", "--out", str(out)]
    assert _main(argv, model_factory=_scripted(seen)) == 0
    assert seen == ["my-spec"]
    results = {r["id"]: r for r in json.loads(out.read_text())["results"]}
    assert results["learning-2"]["passed"] and results["learning-2"]["state_ok"]
    stranger = results["learning-stranger"]
    assert not stranger["passed"] and "nobody" in stranger["errors"][0]
    assert "50% (1)" in capsys.readouterr().err

    assert _main([*argv, "--fail-under", "0.9"], model_factory=_scripted(seen)) == 1
    assert "under --fail-under 0.9" in capsys.readouterr().err
    assert _main([*argv, "--fail-under", "0.5"], model_factory=_scripted(seen)) == 0
    assert _main([*argv, "--fail-under", "2"], model_factory=_scripted(seen)) == 2


def test_a_bad_expectation_stops_the_eval_before_any_run(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = json.loads(dataset.read_text())
    raw["dataset"][1]["expected_state"] = [{"table": "cards", "key": {"id": 1}, "values": {"x": 1}}]
    dataset.write_text(json.dumps(raw))
    seen: list[str | None] = []
    out = tmp_path / "results.json"
    argv = ["eval", str(dataset), "--out", str(out)]
    assert _main(argv, model_factory=_scripted(seen)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "item 'learning-stranger': expected_state[0].values" in err and "'x'" in err
    assert seen == [] and not out.exists()


def _results(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"results": rows}))
    return path


def _row(item_id: str, agent: str, **fields: Any) -> dict[str, Any]:
    return {"id": item_id, "agent": agent, "final_score": 1.0, "passed": True, **fields}


def test_eval_diff_lists_regressions_first_and_gates_on_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _results(
        tmp_path / "old.json",
        [
            _row("a-1", "a", seconds=2.0),
            _row("b-1", "b", final_score=0.5, passed=False),
            _row("b-2", "b", state_ok=True),
        ],
    )
    new = _results(
        tmp_path / "new.json",
        [
            _row("a-1", "a", seconds=3.0),
            _row("b-1", "b"),
            _row(
                "b-2", "b", passed=False, state_ok=False,
                unasked_changes=[{"table": "cards", "kind": "new", "key": {"id": 9}}],
                leaks=[{"field": "hint", "tool": "get_card", "secret_field": "back",
                        "secret": "a"}],
            ),
            _row("c-1", "c"),
        ],
    )  # fmt: skip
    assert _main(["eval-diff", str(old), str(new)]) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if line.startswith(("a-1", "b-", "c-1"))]
    assert [line.split()[:3] for line in lines] == [
        ["b-2", "b", "regression"],
        ["b-1", "b", "improved"],
        ["c-1", "c", "added"],
    ]
    assert "pass yes -> no" in lines[0] and "state 0 -> 1" in lines[0]
    assert "leaks 0 -> 1" in lines[0]
    agents = printed.split("per agent", 1)[1]
    assert agents.splitlines()[2].split()[:2] == ["b", "REGRESSION"]
    assert "1 items regressed" in printed
    assert _main(["eval-diff", str(old), str(new), "--fail-on-regression"]) == 1
    assert _main(["eval-diff", str(old), str(old), "--fail-on-regression"]) == 0
    assert _main(["eval-diff", str(old), str(tmp_path / "none.json")]) == 2
