#!/usr/bin/env bash
# Set up from a fresh clone and run every check: lint, strict types, tests with coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/install_mcp_servers.sh
# Aegra (tests/scale) needs Python >= 3.12: a venv of its own; the main job does not need it.
bash deploy/install_aegra.sh
echo "== ruff"; .venv/bin/ruff check noema_graph tests bench scripts
echo "== pyright (strict)"; .venv/bin/pyright
# The manual (docs/, mkdocs.yml): a broken link, anchor or docstring fails the build. Offline.
echo "== mkdocs build --strict"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir site
echo "== pytest"
export NOEMA_REQUIRE_MCP=1  # a missing MCP server fails the run instead of skipping
# -m "not slow": tests marked slow (none today; for multi-minute runs) stay out of CI
# -n 2 --dist loadgroup: two workers, one PostgreSQL server for both; the modules with llm tests
# run on one worker (one model loaded), the other tests a module at a time (tests/conftest.py).
# NOEMA_TEST_WORKERS=0 runs everything in this process.
.venv/bin/python -m pytest -p no:cacheprovider -m "not slow" -n "${NOEMA_TEST_WORKERS:-2}" \
  --dist loadgroup --durations=25 --cov=noema_graph --cov-report=term --cov-fail-under=90 "$@"
