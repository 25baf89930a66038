"""llama.cpp settings of the embedded model measured against llama.cpp's own figure.

Usage: ``.venv/bin/python bench/bench_settings.py [--rounds 3] [--tokens 512]``

Each setting (threads, ``n_batch``/``n_ubatch``, flash attention, KV cache types) gets its
own server of the bundled model, one after the other in this process; each round sends
every server, in rotating order, a bare prompt of about ``--tokens`` tokens that no cache
holds (a fresh number first, ``cache_prompt`` off) and a 32-token answer, and reads the
server's own ``timings``: ``prompt_per_second`` (llama.cpp's figure for prompt processing)
and ``predicted_per_second``. The table gives each setting's median and its ratio to the
default's. On a machine others load, only figures measured back to back in one process
compare; absolute rates move with the load.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import urllib.request
from typing import Any
from uuid import uuid4

from noema_graph.models.local import LocalModelServer

xllamacpp: Any = importlib.import_module("xllamacpp")  # compiled, no type stubs
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
F16, Q8 = xllamacpp.ggml_type.GGML_TYPE_F16, xllamacpp.ggml_type.GGML_TYPE_Q8_0
FA = xllamacpp.llama_flash_attn_type
SETTINGS: dict[str, tuple[int, dict[str, Any]]] = {
    "default (1 thread, batch 2048/512, FA auto, f16 KV)": (1, {}),
    "2 threads": (2, {}),
    "n_batch 512, n_ubatch 512": (1, {"n_batch": 512, "n_ubatch": 512}),
    "n_batch 256, n_ubatch 128": (1, {"n_batch": 256, "n_ubatch": 128}),
    "n_ubatch 1024": (1, {"n_batch": 2048, "n_ubatch": 1024}),
    "flash attention off": (1, {"flash_attn_type": FA.LLAMA_FLASH_ATTN_TYPE_DISABLED}),
    "flash attention on": (1, {"flash_attn_type": FA.LLAMA_FLASH_ATTN_TYPE_ENABLED}),
    "KV q8_0 (flash attention on)": (
        1,
        {
            "flash_attn_type": FA.LLAMA_FLASH_ATTN_TYPE_ENABLED,
            "cache_type_k": Q8,
            "cache_type_v": Q8,
        },
    ),
}


def prompt_of(tokens: int) -> str:
    """Return a bare prompt of about ``tokens`` tokens that no cache holds."""
    words = " ".join(f"item{i}" for i in range(tokens // 3))
    return f"{uuid4().int % 10**9} {words}. Say ok."


def timed(server: LocalModelServer, tokens: int) -> dict[str, float]:
    """Send one uncached prompt; return the server's timings."""
    body = {"prompt": prompt_of(tokens), "n_predict": 32, "cache_prompt": False}
    request = urllib.request.Request(
        server.base_url.removesuffix("/v1") + "/completion",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with _OPENER.open(request, timeout=300) as response:
        data = json.loads(response.read())
    return data["timings"]


def main() -> None:
    """Measure every setting and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--only", default="", help="comma-separated setting names (prefixes)")
    args = parser.parse_args()
    chosen = {
        name: value
        for name, value in SETTINGS.items()
        if not args.only or any(name.startswith(o) for o in args.only.split(","))
    }
    print(f"load average at start: {os.getloadavg()}")
    prompt: dict[str, list[float]] = {name: [] for name in chosen}
    generation: dict[str, list[float]] = {name: [] for name in chosen}
    counted: dict[str, float] = {}
    for round_ in range(args.rounds):
        names = list(chosen)
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            threads, options = chosen[name]
            server = LocalModelServer(n_threads=threads, options=options)
            server.start()
            try:
                timed(server, 16)  # warm-up
                timings = timed(server, args.tokens)
            finally:
                server.stop()
            prompt[name].append(timings["prompt_per_second"])
            generation[name].append(timings["predicted_per_second"])
            counted[name] = timings["prompt_n"]
    print(f"load average at end: {os.getloadavg()}\n")
    base = next(iter(chosen))
    print("| setting | prompt tokens | prompt tokens/s | x default | generation tokens/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in chosen:
        rate = statistics.median(prompt[name])
        ratio = rate / statistics.median(prompt[base])
        print(
            f"| {name} | {counted[name]:.0f} | {rate:.0f} ({min(prompt[name]):.0f}-"
            f"{max(prompt[name]):.0f}) | {ratio:.2f} | {statistics.median(generation[name]):.0f} |"
        )


if __name__ == "__main__":
    main()
