#!/usr/bin/env bash
# Create or upgrade the server tables in DATABASE_URL, once, before any server starts.
#
# Usage: DATABASE_URL=postgresql://user:password@host:5432/dbname bash deploy/migrate.sh
# Runs Aegra's own migrations (`aegra db upgrade`: assistants, threads, runs, crons), then
# `noema-graph db upgrade`: LangGraph's checkpoint and Store tables, the event log and the
# Noema learning store (in the same database unless NOEMA_LEARNING_DB names another). Both
# are idempotent. `noema-graph demo-data --database-url URL` adds the demo learners.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${AEGRA_VENV:-$ROOT/.aegra-venv}"
: "${DATABASE_URL:?set DATABASE_URL=postgresql://user:password@host:5432/dbname}"
[ -x "$VENV/bin/aegra" ] || { echo "no Aegra in $VENV: run bash deploy/install_aegra.sh" >&2; exit 1; }
cd "$ROOT"
"$VENV/bin/aegra" db upgrade
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$VENV/bin/noema-graph" db upgrade \
  --database-url "$DATABASE_URL" ${NOEMA_LEARNING_DB:+--data "$NOEMA_LEARNING_DB"}
