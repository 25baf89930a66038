"""Re-execute the notebooks in place, so their committed outputs match the code.

Usage, from the repository root (the kernel imports ``noema_graph`` from this checkout)::

    .venv/bin/python scripts/run_notebooks.py            # all five
    .venv/bin/python scripts/run_notebooks.py notebooks/01_quickstart.ipynb
    .venv/bin/python scripts/run_notebooks.py --check    # write nothing

Each notebook runs headless on the embedded offline model (no API key, no network) and is
written back with its outputs, without timings or version metadata. ``--check`` only reports
the cells whose committed outputs are stale in shape, as the test
``tests/integration/test_notebooks.py`` does, and exits 1 if there are any.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from tests.integration.notebook_outputs import (  # noqa: E402
    execute,
    notebooks,
    stale_cells,
    write,
)


def main(argv: list[str] | None = None) -> int:
    """Execute the notebooks named (default: all) and write them back, or check them."""
    parser = argparse.ArgumentParser(description="Re-execute the notebooks in place.")
    parser.add_argument("notebooks", nargs="*", help="notebook paths or names (default: all)")
    parser.add_argument("--check", action="store_true", help="report stale outputs, write nothing")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for path in notebooks(args.notebooks):
        started = time.perf_counter()
        fresh = execute(path)
        seconds = time.perf_counter() - started
        if args.check:
            found = stale_cells(path.name, nbformat.read(path, as_version=4), fresh)
            stale += found
            print(f"{path.name}: {'stale' if found else 'current'} ({seconds:.0f} s)")
        else:
            write(path, fresh)
            print(f"{path.name}: written ({seconds:.0f} s)")
    for message in stale:
        print(message, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
