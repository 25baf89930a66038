"""Notebooks are committed executed, run headless top to bottom, and their outputs are current."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest
from nbformat import NotebookNode

from tests.integration.notebook_outputs import (
    FIX_COMMAND,
    NOTEBOOK_DIR,
    STABLE_METADATA,
    cell_shape,
    clean,
    execute,
    notebooks,
    stale_cells,
    texts,
)

NOTEBOOKS = notebooks()
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


def _read(path: Path) -> NotebookNode:
    return nbformat.read(path, as_version=4)


def _check_ran_through(name: str, notebook: NotebookNode) -> None:
    """Every code cell ran, in order, without error; the texts and pictures are there."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), name
    outputs = [output for cell in code for output in cell.outputs]
    errors = [output for output in outputs if output.output_type == "error"]
    assert not errors, (name, errors)
    printed = texts(notebook)
    for marker in PRINTED[name]:
        assert marker in printed, (name, marker)
    pictures = [output for output in outputs if "image/png" in output.get("data", {})]
    assert len(pictures) == PICTURES[name], name


def test_every_notebook_is_listed() -> None:
    assert [p.name for p in NOTEBOOKS] == sorted(PRINTED) == sorted(PICTURES)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_with_its_outputs(path: Path) -> None:
    notebook = _read(path)
    _check_ran_through(path.name, notebook)
    assert notebook.metadata == STABLE_METADATA, f"version noise; run {FIX_COMMAND}"
    for cell in notebook.cells:
        assert "execution" not in cell.metadata, (path.name, "timings committed")


@pytest.mark.llm
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes_and_its_outputs_are_current(path: Path) -> None:
    fresh = execute(path)
    _check_ran_through(path.name, fresh)
    stale = stale_cells(path.name, _read(path), fresh)
    assert not stale, "\n".join(stale)


# --- the stale check itself, on the committed notebooks (no kernel) ---------------------------

QUICKSTART = NOTEBOOK_DIR / "01_quickstart.ipynb"


def _first_cell_with(notebook: NotebookNode, output_type: str) -> int:
    return next(
        index
        for index, cell in enumerate(notebook.cells)
        if any(output.output_type == output_type for output in cell.get("outputs", []))
    )


def test_same_shape_with_other_texts_and_pictures_is_current() -> None:
    committed = _read(QUICKSTART)
    rerun = copy.deepcopy(committed)
    for cell in rerun.cells:
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                output.text = "other tokens, ids and durations\n"
            for mime in output.get("data", {}):
                output.data[mime] = "other picture"
    assert stale_cells(QUICKSTART.name, committed, rerun) == []


def test_a_dropped_output_is_stale_naming_notebook_cell_and_fix() -> None:
    committed = _read(QUICKSTART)
    rerun = copy.deepcopy(committed)
    index = _first_cell_with(rerun, "display_data")
    rerun.cells[index].outputs = [
        output for output in rerun.cells[index].outputs if output.output_type != "display_data"
    ]
    [message] = stale_cells(QUICKSTART.name, committed, rerun)
    assert message.startswith(f"{QUICKSTART.name} cell {index}: outputs ")
    assert message.endswith(FIX_COMMAND.format(name=QUICKSTART.name))


def test_a_changed_output_type_or_mime_type_is_stale() -> None:
    committed = _read(QUICKSTART)
    rerun = copy.deepcopy(committed)
    stream = _first_cell_with(rerun, "stream")
    rerun.cells[stream].outputs = [
        nbformat.v4.new_output("error", ename="ValueError", evalue="boom", traceback=[])
    ]
    picture = _first_cell_with(rerun, "execute_result")
    del rerun.cells[picture].outputs[0].data["image/png"]
    found = stale_cells(QUICKSTART.name, committed, rerun)
    assert [message.split(":")[0] for message in found] == [
        f"{QUICKSTART.name} cell {min(stream, picture)}",
        f"{QUICKSTART.name} cell {max(stream, picture)}",
    ]
    assert "error:ValueError" in "".join(found)


def test_an_edited_source_or_a_new_cell_is_stale() -> None:
    committed = _read(QUICKSTART)
    edited = copy.deepcopy(committed)
    edited.cells[2].source += "\nprint('new')"
    fix = FIX_COMMAND.format(name="q.ipynb")
    assert stale_cells("q.ipynb", committed, edited) == [
        f"q.ipynb cell 2: source differs from the executed one; run: {fix}"
    ]
    longer = copy.deepcopy(committed)
    longer.cells.append(nbformat.v4.new_markdown_cell("more"))
    [message] = stale_cells("q.ipynb", committed, longer)
    assert message.startswith(f"q.ipynb: {len(committed.cells)} cells committed")


def test_split_streams_have_the_shape_of_one_and_stderr_none() -> None:
    one = nbformat.v4.new_code_cell(
        "print(1)", outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n2\n")]
    )
    split = copy.deepcopy(one)
    split.outputs.append(nbformat.v4.new_output("stream", name="stdout", text="3\n"))
    split.outputs.append(nbformat.v4.new_output("stream", name="stderr", text="WARNING\n"))
    assert cell_shape(one) == cell_shape(split)
    assert cell_shape(one).outputs == ("stream:stdout",)


def test_a_log_on_stderr_is_a_value_not_a_shape() -> None:
    committed = _read(QUICKSTART)
    rerun = copy.deepcopy(committed)
    for cell in rerun.cells:
        if cell.cell_type == "code":
            cell.outputs.insert(0, nbformat.v4.new_output("stream", name="stderr", text="WARN\n"))
    assert stale_cells(QUICKSTART.name, committed, rerun) == []
    assert stale_cells(QUICKSTART.name, rerun, committed) == []


def test_clean_drops_timings_and_versions() -> None:
    notebook = nbformat.v4.new_notebook(
        metadata={"language_info": {"name": "python", "version": "3.11.9"}},
        cells=[nbformat.v4.new_code_cell("1", metadata={"execution": {"iopub.status.busy": "x"}})],
    )
    clean(notebook)
    assert notebook.metadata == STABLE_METADATA
    assert notebook.cells[0].metadata == {}
