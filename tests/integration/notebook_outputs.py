"""Notebooks committed with their outputs: execute them, clean them, check they are not stale.

The notebooks in ``notebooks/`` are committed executed, so their pictures and tables show where
the repository is browsed. :func:`execute` runs one headless in a fresh kernel and :func:`clean`
drops what changes on every run without meaning anything (timings, kernel versions), so that
re-executing gives a small diff. :func:`stale_cells` compares a committed notebook with a fresh
run by *shape*: cells, their types and sources, and per cell the outputs' types, stream names
and MIME types (``stderr`` aside: logs and warnings come and go with the model's text). Texts,
numbers and pictures may differ between runs (the model's answers, ids, durations); a shape
that differs means the committed outputs are out of date.

``scripts/run_notebooks.py`` (:data:`FIX_COMMAND`) re-executes the notebooks in place.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
FIX_COMMAND = ".venv/bin/python scripts/run_notebooks.py notebooks/{name}"
"""What a developer runs, from the repository root, to re-execute a stale notebook in place."""
KERNEL = "python3"
"""The kernel of the running interpreter (jupyter_client runs it with ``sys.executable``)."""
TIMEOUT_S = 600
"""Longest one cell may run (the evaluation notebook's runs take minutes on two cores)."""
STABLE_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": KERNEL},
    "language_info": {"name": "python"},
}
"""Notebook metadata as committed: no interpreter, IPython or kernel versions."""
VOLATILE = frozenset({"stream:stderr"})
"""Outputs whose presence is a value, not a shape (see :func:`cell_shape`)."""


class CellShape(NamedTuple):
    """What must not change between two runs of one cell."""

    cell_type: str
    source: str
    outputs: tuple[str, ...]
    """One entry per output: ``stream:stdout``, ``display_data:image/png,text/plain``, ..."""


def output_shape(output: NotebookNode) -> str:
    """Return one output's shape: its type and its stream name or MIME types, no content."""
    kind = str(output["output_type"])
    if kind == "stream":
        return f"{kind}:{output['name']}"
    if kind == "error":
        return f"{kind}:{output['ename']}"
    return f"{kind}:{','.join(sorted(output.get('data', {})))}"


def cell_shape(cell: NotebookNode) -> CellShape:
    """Return ``cell``'s shape; a stream name counts once, as a kernel may split its text.

    ``stderr`` is left out: it carries log records and library warnings, whose presence
    depends on what the model wrote (a flagged action, a limit hit) and on library versions,
    not on the notebook's code.
    """
    shapes: list[str] = []
    for output in cell.get("outputs", []):
        shape = output_shape(output)
        if shape in VOLATILE or (shape.startswith("stream:") and shape in shapes):
            continue
        shapes.append(shape)
    return CellShape(str(cell["cell_type"]), str(cell["source"]), tuple(shapes))


def stale_cells(name: str, committed: NotebookNode, fresh: NotebookNode) -> list[str]:
    """Compare a committed notebook with a fresh run of it, by shape.

    Args:
        name: The notebook's file name, for the messages.
        committed: The notebook as committed.
        fresh: The same notebook executed now.

    Returns:
        One message per difference (empty when the committed outputs are current), each
        naming the notebook, the cell index and the command that rewrites the outputs.
    """
    fix = FIX_COMMAND.format(name=name)
    old = [cell_shape(cell) for cell in committed.cells]
    new = [cell_shape(cell) for cell in fresh.cells]
    if len(old) != len(new):
        return [f"{name}: {len(old)} cells committed, {len(new)} executed; run: {fix}"]
    return [
        f"{name} cell {index}: {_difference(before, after)}; run: {fix}"
        for index, (before, after) in enumerate(zip(old, new, strict=True))
        if before != after
    ]


def _difference(before: CellShape, after: CellShape) -> str:
    """Say in words how two shapes of one cell differ."""
    if before.cell_type != after.cell_type:
        return f"cell type {before.cell_type} committed, {after.cell_type} executed"
    if before.source != after.source:
        return "source differs from the executed one"
    return f"outputs {list(before.outputs)} committed, {list(after.outputs)} executed"


def clean(notebook: NotebookNode) -> NotebookNode:
    """Drop what changes on every run without meaning anything; return ``notebook``.

    Notebook metadata goes back to :data:`STABLE_METADATA` (no versions), and cells lose their
    ``execution`` timings and ``collapsed``/``scrolled`` view state.
    """
    notebook.metadata = nbformat.from_dict(STABLE_METADATA)
    for cell in notebook.cells:
        for key in ("execution", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
    return notebook


def execute(path: Path, *, timeout_s: int = TIMEOUT_S) -> NotebookNode:
    """Run the notebook at ``path`` top to bottom in a fresh kernel and return it cleaned.

    The kernel runs in the notebook's folder and imports ``noema_graph`` from this checkout
    (the repository root goes first on its ``PYTHONPATH``). Streams of one name are merged
    per cell and no timings are recorded, so two runs differ only where the values do.
    """
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout_s,
        kernel_name=KERNEL,
        record_timing=False,
        coalesce_streams=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=_kernel_env())
    return clean(notebook)


def _kernel_env() -> dict[str, str]:
    """Return this process's environment with the repository root first on ``PYTHONPATH``."""
    env = dict(os.environ)
    paths = [str(ROOT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def write(path: Path, notebook: NotebookNode) -> None:
    """Write ``notebook`` to ``path`` as nbformat 4 JSON (one-space indent, newline at end)."""
    nbformat.write(notebook, path)


def notebooks(names: Sequence[str] = ()) -> list[Path]:
    """Return the notebooks named (paths or file names), or every one in ``notebooks/``."""
    if not names:
        return sorted(NOTEBOOK_DIR.glob("*.ipynb"))
    found = [NOTEBOOK_DIR / Path(name).name for name in names]
    missing = [str(path) for path in found if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"no such notebook: {missing}; the notebooks are in {NOTEBOOK_DIR}")
    return found


def texts(notebook: NotebookNode) -> str:
    """Return every text a notebook's code cells printed (streams and ``text/plain``), joined."""
    parts: list[Any] = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(str(part) for part in parts)
