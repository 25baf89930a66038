"""The README's promises: its Python quick start runs, its commands exist."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noema_graph.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _block(heading: str) -> str:
    section = README.split(heading, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block after {heading!r}"
    return match.group(1)


@pytest.mark.llm
def test_quick_start_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        exec(compile(_block("## Quick start"), "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "True 5", printed  # the answer, from add(2, 3)
    usage = re.search(r"^(\d+) 0\.0$", printed, re.M)  # tokens counted, the local model is free
    assert usage and int(usage.group(1)) > 0, printed
    assert "['plan'" in printed and (tmp_path / "runs.sqlite").exists()


def test_quick_start_answers_five_on_a_scripted_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README block, verbatim, with make_model returning a model that follows the script."""
    import noema_graph.models
    from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

    model = ScriptedChatModel(
        script=[
            plan_reply("Add 2 and 3 with the add tool"),
            tools_reply(call("add", {"a": 2, "b": 3})),
            text("5"),
        ]
    )
    monkeypatch.setattr(noema_graph.models, "make_model", lambda spec=None: model)
    monkeypatch.chdir(tmp_path)
    exec(compile(_block("## Quick start"), "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "True 5"
    assert printed[2].startswith("['plan', 'tool', 'thought', 'final']")
    model.assert_complete()


def test_readme_commands_exist() -> None:
    runner = CliRunner()
    for command in re.findall(r"^noema-graph ([\w-]+)", README, re.M):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0, (command, result.output)
    assert "bash scripts/test.sh" in README
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
