"""Fixtures of the CLI tests: the app on scripted models, in a fresh working directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """Return ``invoke(*args, input="")`` and the list of models the next runs use, in order."""
    from noema_graph.cli import app as cli_module

    monkeypatch.chdir(tmp_path)
    models: list[Any] = []
    options = cli_module.CliOptions(model_factory=lambda spec: models.pop(0))

    def invoke(*args: str, input: str = "") -> Any:
        return CliRunner().invoke(
            cli_module.app, list(args), input=input, env={"COLUMNS": "300"}, obj=options
        )

    return invoke, models


def one_error_line(result: Any) -> str:
    """Assert ``result`` exited 2 with exactly one line, an error naming its fix; return it."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and "(fix: " in lines[0], lines[0]
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return lines[0]
