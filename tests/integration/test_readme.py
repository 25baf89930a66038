"""The README's promises: its Python quick start runs, its commands exist.

The same quick start is the manual's (docs/getting-started.md); both copies run here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noema_graph.cli.app import app
from tests.doc_pages import ROOT, block, pages, read

# The quick start: README's first five minutes, and the manual's getting-started page.
QUICK_STARTS = {
    "README.md": "## Your first five minutes",
    "docs/getting-started.md": "## Quick start (Python)",
}


def _quick_start(page: str = "README.md") -> str:
    return block(page, QUICK_STARTS[page])


@pytest.mark.llm
def test_quick_start_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        exec(compile(_quick_start(), "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "True 5", printed  # the answer, from add(2, 3)
    usage = re.search(r"^(\d+) 0\.0$", printed, re.M)  # tokens counted, the local model is free
    assert usage and int(usage.group(1)) > 0, printed
    assert "['plan'" in printed and (tmp_path / "runs.sqlite").exists()


@pytest.mark.parametrize("page", sorted(QUICK_STARTS))
def test_quick_start_answers_five_on_a_scripted_model(
    page: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The page's block, verbatim, with make_model returning a model that follows the script."""
    import noema_graph.models
    from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

    model = ScriptedChatModel(
        script=[
            plan_reply("Add 2 and 3 with the add tool"),
            tools_reply(call("add", {"a": 2, "b": 3})),
            text("5"),
        ]
    )

    def make_model(spec: str | None = None) -> ScriptedChatModel:
        return model

    monkeypatch.setattr(noema_graph.models, "make_model", make_model)
    monkeypatch.chdir(tmp_path)
    exec(compile(_quick_start(page), page, "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "True 5"
    assert printed[2].startswith("['plan', 'tool', 'thought', 'final']")
    model.assert_complete()


def test_readme_commands_exist() -> None:
    """Every ``noema-graph COMMAND`` line of README.md and of the manual names a command."""
    runner = CliRunner()
    found = (re.findall(r"^noema-graph ([\w-]+)", read(page), re.M) for page in pages())
    commands = {command for page in found for command in page}
    assert {"run", "agents", "eval", "undo"} <= commands  # the pages were read
    for command in sorted(commands):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0, (command, result.output)
    assert "bash scripts/test.sh" in read("README.md")
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_the_manual_shows_the_same_two_commands() -> None:
    readme = block("README.md", "## Two commands", "bash")
    assert "bash scripts/test.sh" in readme
    assert block("docs/getting-started.md", "## Two commands", "bash") == readme
