"""The package's import layers and the absence of circles, as declared in pyproject.toml.

``[tool.importlinter]`` lists the layers from ``cli`` down to ``errors``; ``lint-imports``
fails on any import that runs up a layer, any circle between the modules of a package, and
any import of ``evals`` or ``cli`` from run-time code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_imports_follow_the_declared_layers() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout, not an installed copy
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
