#!/usr/bin/env bash
# Serve noema-graph's langgraph.json with one Aegra process on PORT against DATABASE_URL.
#
# Usage: DATABASE_URL=postgresql://... bash deploy/serve.sh PORT [HOST]
# The Noema learning store is the same database unless NOEMA_LEARNING_DB names another (a
# file or a URL): NOEMA_DATABASE_URL defaults to DATABASE_URL.
# HOST defaults to 127.0.0.1. Run deploy/migrate.sh once first: servers skip migrations at
# start (RUN_MIGRATIONS_ON_STARTUP=false), so N of them start together without racing.
# The model comes from NOEMA_MODEL (or OPENAI_API_KEY, else the embedded model); tools that
# wait for approval from NOEMA_CONFIRM_TOOLS (comma-separated). Any Aegra setting may be set
# in the environment too (LANGGRAPH_MAX_POOL_SIZE, SQLALCHEMY_POOL_SIZE, LOG_LEVEL...), and
# NOEMA_SERVER_HEARTBEAT_S / NOEMA_SERVER_TTL_S (default 2 and 10): how often this server
# beats, and after how long without a beat another server marks its runs failed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${AEGRA_VENV:-$ROOT/.aegra-venv}"
PORT="${1:?usage: deploy/serve.sh PORT [HOST]}"
HOST="${2:-127.0.0.1}"
: "${DATABASE_URL:?set DATABASE_URL=postgresql://user:password@host:5432/dbname}"
[ -x "$VENV/bin/aegra" ] || { echo "no Aegra in $VENV: run bash deploy/install_aegra.sh" >&2; exit 1; }
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's noema_graph first
export NOEMA_DATABASE_URL="${NOEMA_DATABASE_URL:-$DATABASE_URL}"  # one URL for everything
export RUN_MIGRATIONS_ON_STARTUP="${RUN_MIGRATIONS_ON_STARTUP:-false}"
export LOG_LEVEL="${LOG_LEVEL:-WARNING}"
# Aegra's config: langgraph.json's graphs (read now: a graph added later is served after a
# restart) plus deploy/aegra_app.py (noema's serializer, runs of a dead server marked failed).
CONFIG="${AEGRA_CONFIG_DIR:-${TMPDIR:-/tmp}}/noema-aegra-$PORT.json"
"$VENV/bin/python" "$ROOT/deploy/aegra_config.py" "$CONFIG"
exec "$VENV/bin/aegra" serve --host "$HOST" --port "$PORT" -c "$CONFIG"
