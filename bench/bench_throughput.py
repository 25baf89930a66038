"""A run's prompt throughput against llama.cpp's own figure, same server, same minute.

Usage: ``.venv/bin/python bench/bench_throughput.py [--threads 1] [--rounds 3]
[--agents calibration,learning]``

One embedded server (the bundled model, ``--threads`` threads, llama.cpp's ``/metrics``
endpoint on) serves, in each round: llama.cpp's own figure (``bench/bench_settings.py``'s
bare prompt of about 512 tokens that no cache holds, the server's ``prompt_per_second``),
then one run of each agent on another item of the Noema task set each round (fresh demo
store; the agent's prefix saved by an unmeasured run on its first item, as by an earlier
process). A run's prompt rate is
llama.cpp's own count of the prompt tokens the run's calls processed over the seconds it
spent processing them (the ``prompt_tokens_total`` and ``prompt_seconds_total`` counters of
``/metrics`` before and after the run; restoring a saved prefix is not counted as prompt
processing). The ratio is the run's rate over the bare prompt's of the same round.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import statistics
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from bench_settings import timed  # bench/ is sys.path[0] when run as a script

from noema_graph.evals import NOEMA_TASKS
from noema_graph.facade import run_agent
from noema_graph.models import make_model
from noema_graph.models.local import THREADS_ENV, shared_local_server
from noema_graph.noema import write_demo_data

xllamacpp: Any = importlib.import_module("xllamacpp")  # compiled, no type stubs
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_COUNTER = re.compile(r"^llamacpp:(prompt_tokens_total|prompt_seconds_total) ([0-9.e+-]+)$", re.M)


def with_metrics() -> None:
    """Make every server of this process expose llama.cpp's ``/metrics`` counters."""
    plain: Any = xllamacpp.CommonParams

    def params() -> Any:
        made = plain()
        made.endpoint_metrics = True
        return made

    xllamacpp.CommonParams = params


def counters(base_url: str) -> dict[str, float]:
    """Return llama.cpp's cumulative prompt tokens and prompt seconds."""
    with _OPENER.open(base_url.removesuffix("/v1") + "/metrics", timeout=30) as response:
        text = response.read().decode()
    return {name: float(value) for name, value in _COUNTER.findall(text)}


def agent_items() -> dict[str, list[dict[str, str]]]:
    """Return each agent's items of the shipped task set (request and learner), in order."""
    items: dict[str, list[dict[str, str]]] = {}
    for item in json.loads(NOEMA_TASKS.read_text())["dataset"]:
        tags = dict(t.split(":", 1) for t in item["tags"])
        items.setdefault(tags["agent"], []).append({"request": item["input"], "user": tags["user"]})
    return items


def one_run(
    model: Any, agent: str, item: dict[str, str], db: Path, base_url: str
) -> tuple[float, float]:
    """Run ``agent`` on ``item`` over a fresh store; return (prompt tokens, prompt seconds)."""
    write_demo_data(db)
    before = counters(base_url)
    run_agent(agent, item["request"], user_id=item["user"], model=model, db=db)
    after = counters(base_url)
    return (
        after["prompt_tokens_total"] - before["prompt_tokens_total"],
        after["prompt_seconds_total"] - before["prompt_seconds_total"],
    )


def main() -> None:
    """Measure and print one markdown row per agent."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--agents", default="calibration")
    args = parser.parse_args()
    os.environ[THREADS_ENV] = str(args.threads)
    with_metrics()
    items = agent_items()
    agents = [a for a in args.agents.split(",") if a]
    own: list[float] = []
    rates: dict[str, list[float]] = {a: [] for a in agents}
    ratios: dict[str, list[float]] = {a: [] for a in agents}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NOEMA_PROMPT_CACHE"] = str(Path(tmp) / "cache")
        model = make_model("local")
        server = shared_local_server()
        print(f"load average at start: {os.getloadavg()}, threads {server.n_threads}")
        timed(server, 16)  # warm-up
        for agent in agents:  # saves each agent's prefix, as an earlier process would have
            one_run(model, agent, items[agent][0], Path(tmp) / f"{agent}.sqlite", server.base_url)
        for round_ in range(args.rounds):
            figure = float(timed(server, 512)["prompt_per_second"])
            own.append(figure)
            if server.prefix_cache is not None:
                server.prefix_cache.forget()  # the bare prompt took the slot: restore again
            for agent in agents:  # another item each round: no cache holds its request
                item = items[agent][1 + round_ % (len(items[agent]) - 1)]
                db = Path(tmp) / f"{agent}-{round_}.sqlite"
                tokens, seconds = one_run(model, agent, item, db, server.base_url)
                rate = tokens / seconds if seconds else 0.0
                rates[agent].append(rate)
                ratios[agent].append(figure / rate if rate else float("inf"))
                print(
                    f"round {round_} {agent}: {tokens:.0f} tokens in {seconds:.2f} s, "
                    f"{rate:.0f}/s; own {figure:.0f}/s"
                )
    print(f"load average at end: {os.getloadavg()}\n")
    print(
        "| agent | threads | llama.cpp's own prompt tokens/s | run's prompt tokens/s | own / run |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for agent in agents:
        print(
            f"| {agent} | {args.threads} | {statistics.median(own):.0f} "
            f"| {statistics.median(rates[agent]):.0f} | {statistics.median(ratios[agent]):.2f} |"
        )


if __name__ == "__main__":
    main()
