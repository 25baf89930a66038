#!/usr/bin/env bash
# Run N Aegra servers of noema-graph on ports FIRST_PORT.. against one PostgreSQL database.
#
# Usage: DATABASE_URL=postgresql://... \
#          bash deploy/cluster.sh N [FIRST_PORT]
# Migrates once (deploy/migrate.sh), starts the servers (deploy/serve.sh), waits until each
# answers /health, and stops them all on Ctrl-C or when one of them exits. Logs go to
# ${LOG_DIR:-.aegra-logs}/server-PORT.log. Put any HTTP load balancer in front of the ports.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
N="${1:?usage: deploy/cluster.sh N [FIRST_PORT]}"
FIRST_PORT="${2:-2026}"
LOG_DIR="${LOG_DIR:-.aegra-logs}"
mkdir -p "$LOG_DIR"
bash "$HERE/migrate.sh"
pids=()
stop() { for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done; wait; }
trap stop EXIT INT TERM
ready() {  # wait until server $1 (0-based) answers /health
  local port=$((FIRST_PORT + $1))
  until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
    kill -0 "${pids[$1]}" 2>/dev/null || { echo "server on $port exited: see $LOG_DIR/server-$port.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "serving on http://127.0.0.1:$port"
}
# The first server starts alone: at start Aegra registers a default assistant per graph, and
# servers doing that together on a new database collide (one exits on a duplicate key).
for ((i = 0; i < N; i++)); do
  port=$((FIRST_PORT + i))
  setsid bash "$HERE/serve.sh" "$port" >"$LOG_DIR/server-$port.log" 2>&1 &  # own group
  pids+=("$!")
  if [ "$i" -eq 0 ]; then ready 0; fi
done
for ((i = 1; i < N; i++)); do ready "$i"; done
wait -n
