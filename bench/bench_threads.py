"""Benchmark the embedded model's thread count: tokens/s for 1, 2... threads, idle and busy.

Usage: ``python bench/bench_threads.py [--threads 1 2] [--runs 3] [--tokens 64] [--busy 1]
[--out FILE]``

For each thread count one ``LocalModelServer`` is started; generation speed (llama.cpp's own
``predicted_per_second`` and tokens over wall time, ``ignore_eos``) is measured with the
machine as it is ("idle": no load added by this script), then with ``--busy`` extra processes
each spinning a pure-Python loop, the way another tenant or a test run would load the
machine. Figures are medians over ``--runs`` generations. Prints a markdown table (and writes
it to ``--out`` when given) with the default the package would pick here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from noema_graph.models.local import LocalModelServer, available_cpus, local_threads

PROMPT = "Write a short story about a robot who learns to paint."
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_SPIN = "while True:\n    pass\n"


def _generate(base_url: str, tokens: int) -> tuple[float, float]:
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,
        "cache_prompt": False,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with _OPENER.open(request, timeout=300) as response:
        reply = json.loads(response.read())
    wall = time.perf_counter() - started
    return reply["usage"]["completion_tokens"] / wall, float(
        reply["timings"]["predicted_per_second"]
    )


def _measure(base_url: str, runs: int, tokens: int) -> dict[str, float]:
    _generate(base_url, 8)  # warm-up: first-call allocations are not generation speed
    samples = [_generate(base_url, tokens) for _ in range(runs)]
    walls, servers = [s[0] for s in samples], [s[1] for s in samples]
    return {
        "wall": statistics.median(walls),
        "server": statistics.median(servers),
        "server_min": min(servers),
        "server_max": max(servers),
    }


def _spinners(count: int) -> list[subprocess.Popen[bytes]]:
    procs = [subprocess.Popen([sys.executable, "-c", _SPIN]) for _ in range(count)]
    time.sleep(0.5)  # let the scheduler see them running
    return procs


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait()


def run(threads: list[int], runs: int, tokens: int, busy: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for n in threads:
        server = LocalModelServer(n_ctx=1024, n_threads=n)
        base_url = server.start()
        try:
            for label, load in (("idle", 0), (f"busy x{busy}", busy)):
                procs = _spinners(load)
                try:
                    figures = _measure(base_url, runs, tokens)
                finally:
                    _stop(procs)
                rows.append({"threads": n, "load": label, **figures})
        finally:
            server.stop()
    return rows


def render(rows: list[dict[str, Any]], runs: int, tokens: int, load_before: float) -> str:
    lines = [
        "# Embedded model: thread count",
        "",
        f"Machine: {platform.machine()}, os.cpu_count() {os.cpu_count()}, CPUs available to "
        f"the process {available_cpus()}, Python {platform.python_version()}, load average "
        f"before the run {load_before:.2f} (the machine is shared: 'idle' adds no load, it "
        "does not remove other people's).",
        f"Medians of {runs} generations of {tokens} tokens (ignore_eos), n_ctx 1024. "
        f"Default thread count here: {local_threads({})} (NOEMA_LOCAL_THREADS unset).",
        "",
        "| threads | load | tokens/s (server, median) | server min-max | tokens/s (wall) |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['threads']} | {r['load']} | {r['server']:.1f} "
        f"| {r['server_min']:.1f}-{r['server_max']:.1f} | {r['wall']:.1f} |"
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--busy", type=int, default=1, help="spinning processes for 'busy'")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    table = render(
        run(args.threads, args.runs, args.tokens, args.busy), args.runs, args.tokens, load_before
    )
    print(table)
    if args.out is not None:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
