"""The CLI's public model hook: ``main(argv, model_factory=...)`` runs it on your own model."""

from __future__ import annotations

from pathlib import Path

import pytest

from noema_graph.cli import main
from tests.doc_pages import block
from tests.scripted import ScriptedChatModel, plan_reply, text


def _cli_block() -> str:
    """Return the Python block of the manual's command line page."""
    return block("docs/cli.md", "# Command line")


def test_the_docs_example_runs_the_cli_on_your_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    model = ScriptedChatModel(script=[plan_reply("Multiply"), text("391")])
    with pytest.raises(SystemExit) as exited:
        exec(compile(_cli_block(), "docs/cli.md", "exec"), {"my_chat_model": model})
    assert exited.value.code == 0
    assert capsys.readouterr().out == "391\n"
    model.assert_complete()
    assert (tmp_path / "noema.sqlite").exists()  # the real CLI: the run is checkpointed


def test_the_factory_gets_the_model_flag_for_ask_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    seen: list[str | None] = []

    def factory(spec: str | None) -> ScriptedChatModel:
        seen.append(spec)
        return ScriptedChatModel(script=[text("you studied decks")])

    with pytest.raises(SystemExit) as exited:
        main(
            ["ask", "What did I study?", "--model", "openai:my-model", "-q"], model_factory=factory
        )
    assert exited.value.code == 0 and capsys.readouterr().out == "you studied decks\n"
    with pytest.raises(SystemExit) as exited:
        main(["resume", "nope"], model_factory=factory)  # a usage error builds no model
    assert exited.value.code == 2 and "no thread 'nope'" in capsys.readouterr().err
    assert seen == ["openai:my-model"]
