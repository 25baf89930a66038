#!/usr/bin/env bash
# Install the third-party MCP servers used by the `mcp` test marker and bench/bench_tools.py.
#
# Idempotent: re-running only installs what is missing. Paths (both gitignored):
#   .mcp-venv/   Python venv with mcp-server-time and mcp-server-git (they need mcp>=2.3,
#                while langchain-mcp-adapters 0.3.x in .venv needs mcp<2, so they live apart).
#   .mcp-node/   npm prefix with @modelcontextprotocol/server-filesystem and server-everything.
#
# Usage: scripts/install_mcp_servers.sh [--force]
#   PYTHON=python3.11 scripts/install_mcp_servers.sh   # choose the interpreter for .mcp-venv
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.mcp-venv"
NODE_PREFIX="$ROOT/.mcp-node"
PYTHON="${PYTHON:-python3}"
FORCE="${1:-}"

PY_SERVERS=(mcp-server-time mcp-server-git)
NPM_SERVERS=(@modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything)

if [[ "$FORCE" == "--force" ]]; then
  rm -rf "$VENV" "$NODE_PREFIX"
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
missing_py=()
for pkg in "${PY_SERVERS[@]}"; do
  [[ -x "$VENV/bin/$pkg" ]] || missing_py+=("$pkg")
done
if ((${#missing_py[@]})); then
  echo "installing ${missing_py[*]} into $VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet "${missing_py[@]}"
fi

mkdir -p "$NODE_PREFIX"
missing_npm=()
for pkg in "${NPM_SERVERS[@]}"; do
  [[ -f "$NODE_PREFIX/node_modules/$pkg/package.json" ]] || missing_npm+=("$pkg")
done
if ((${#missing_npm[@]})); then
  command -v npm >/dev/null || { echo "npm not found: install Node.js >= 18" >&2; exit 1; }
  echo "installing ${missing_npm[*]} into $NODE_PREFIX"
  npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --silent "${missing_npm[@]}"
fi

echo "MCP servers ready:"
for pkg in "${PY_SERVERS[@]}"; do echo "  $VENV/bin/$pkg"; done
for pkg in "${NPM_SERVERS[@]}"; do
  echo "  $NODE_PREFIX/node_modules/$pkg ($(node -p "require('$NODE_PREFIX/node_modules/$pkg/package.json').version"))"
done
