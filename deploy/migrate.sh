#!/usr/bin/env bash
# Create or upgrade the server tables in DATABASE_URL, once, before any server starts.
#
# Usage: DATABASE_URL=postgresql://user:password@host:5432/dbname bash deploy/migrate.sh
# Runs Aegra's own migrations (`aegra db upgrade`: assistants, threads, runs, crons). The
# LangGraph checkpoint and Store tables are created by each server at start (setup() of
# langgraph-checkpoint-postgres, idempotent). The Noema learning store is still a SQLite file
# (NOEMA_LEARNING_DB); `noema-graph demo-data --db FILE` creates one with demo learners.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${AEGRA_VENV:-$ROOT/.aegra-venv}"
: "${DATABASE_URL:?set DATABASE_URL=postgresql://user:password@host:5432/dbname}"
[ -x "$VENV/bin/aegra" ] || { echo "no Aegra in $VENV: run bash deploy/install_aegra.sh" >&2; exit 1; }
cd "$ROOT"
"$VENV/bin/aegra" db upgrade
