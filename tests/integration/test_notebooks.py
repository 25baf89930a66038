"""Notebooks run headless, top to bottom, and are committed without outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
PRINTED = {
    "01_quickstart.ipynb": ("success:", "tokens:", "cost USD:", "execute_step"),
    "02_streaming.ipynb": ("[turn_start]", "[update] plan wrote", "[turn_end]", "success:"),
    "03_checkpoints.ipynb": ("thread_id", "goal:", "fork result:", "original result:", "fork"),
    "04_evaluation.ipynb": ("final_score", "worst:"),
    "05_ask_and_memory.ipynb": ("agent mode:", "ask mode:", "recalled for bo: 0"),
}
"""What each notebook prints when it ran through."""
PICTURES = {
    "01_quickstart.ipynb": 2,
    "02_streaming.ipynb": 1,
    "03_checkpoints.ipynb": 2,
    "04_evaluation.ipynb": 1,
    "05_ask_and_memory.ipynb": 1,
}
"""How many PNG pictures each notebook shows (graphs and plots, all drawn offline)."""


def test_every_notebook_is_listed() -> None:
    assert [p.name for p in NOTEBOOKS] == sorted(PRINTED) == sorted(PICTURES)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_stripped(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None


@pytest.mark.llm
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    for marker in PRINTED[path.name]:
        assert marker in text, (path.name, marker)
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pictures) == PICTURES[path.name], path.name
