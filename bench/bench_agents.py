"""Where the ten Noema agents' time goes on the embedded model.

Usage: ``.venv/bin/python bench/bench_agents.py [--runs N] [--agents learning,calibration]``

Each run takes the agent's first item of the Noema task set (its request and learner), gets
a fresh demo store and runs it through :func:`noema_graph.run_agent`. A callback on the model
records every call: its wall time and its prompt, cached and completion tokens (llama.cpp
reports ``cached_tokens``: the prompt prefix its cache served). The split of a call's time is
estimated from two rates measured first on the same server: generation (tokens/s of a short
prompt's long answer) and prompt processing (tokens/s of a long uncached prompt's one-token
answer); generation is ``completion / rate``, prompt processing the rest of the call.
Framework is the run's wall time less its model calls (it includes the tools' own time).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from noema_graph.evals import NOEMA_TASKS
from noema_graph.facade import run_agent
from noema_graph.models import make_model
from noema_graph.noema import write_demo_data


class CallTimer(BaseCallbackHandler):
    """Records each model call's wall time and token counts."""

    def __init__(self) -> None:
        self.started: dict[UUID, float] = {}
        self.calls: list[dict[str, float]] = []

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **_: Any
    ) -> None:
        self.started[run_id] = time.perf_counter()

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **_: Any) -> None:
        seconds = time.perf_counter() - self.started.pop(run_id, time.perf_counter())
        usage = (response.llm_output or {}).get("token_usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        self.calls.append(
            {
                "seconds": seconds,
                "prompt": float(usage.get("prompt_tokens") or 0),
                "cached": float(details.get("cached_tokens") or 0),
                "completion": float(usage.get("completion_tokens") or 0),
            }
        )


def rates(model: Any) -> tuple[float, float]:
    """Return (prompt tokens/s, generation tokens/s) of the server, measured uncached."""
    filler = " ".join(f"word{i}" for i in range(600))
    started = time.perf_counter()
    long = model.bind(max_completion_tokens=1).invoke(f"{uuid4()} {filler}. Say ok.")
    prompt_s = time.perf_counter() - started
    started = time.perf_counter()
    answer = model.bind(max_completion_tokens=128).invoke(f"{uuid4()} Count from 1 to 100.")
    generation_s = time.perf_counter() - started
    prompt_tokens = long.usage_metadata["input_tokens"] if long.usage_metadata else 0
    completion = answer.usage_metadata["output_tokens"] if answer.usage_metadata else 0
    return prompt_tokens / prompt_s, completion / generation_s


def first_items() -> dict[str, dict[str, Any]]:
    """Return each agent's first item of the shipped task set."""
    items: dict[str, dict[str, Any]] = {}
    for item in json.loads(NOEMA_TASKS.read_text())["dataset"]:
        tags = dict(t.split(":", 1) for t in item["tags"])
        items.setdefault(tags["agent"], {"request": item["input"], "user": tags["user"]})
    return items


def one_run(
    model: Any, timer: CallTimer, agent: str, item: dict[str, Any], db: Path, gen_rate: float
) -> dict[str, float]:
    """Run ``agent`` on its item over a fresh store; return its time split."""
    write_demo_data(db)
    timer.calls.clear()
    started = time.perf_counter()
    out = run_agent(agent, item["request"], user_id=item["user"], model=model, db=db)
    wall = time.perf_counter() - started
    model_s = sum(c["seconds"] for c in timer.calls)
    generation = sum(c["completion"] for c in timer.calls) / gen_rate
    return {
        "wall": wall,
        "calls": len(timer.calls),
        "model": model_s,
        "generation": min(generation, model_s),
        "prompt": max(model_s - generation, 0.0),
        "framework": wall - model_s,
        "prompt_tokens": sum(c["prompt"] for c in timer.calls),
        "cached_tokens": sum(c["cached"] for c in timer.calls),
        "success": float(out.success),
    }


def main() -> None:
    """Run the benchmark and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--agents", default="")
    args = parser.parse_args()
    timer = CallTimer()
    model = make_model("local")
    model.callbacks = [timer]
    model.invoke("Warm up.")
    prompt_rate, gen_rate = rates(model)
    items = first_items()
    agents = [a for a in args.agents.split(",") if a] or list(items)
    print(
        f"{platform.node()} {platform.machine()} python {platform.python_version()} "
        f"noema-graph {importlib.metadata.version('noema-graph')} "
        f"xllamacpp {importlib.metadata.version('xllamacpp')}; prompt {prompt_rate:.0f} tok/s, "
        f"generation {gen_rate:.0f} tok/s"
    )
    print(
        "| agent | runs | ok | wall s | model calls | prompt s | generation s | framework s "
        "| prompt tokens | cached |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for agent in agents:
            runs = [
                one_run(model, timer, agent, items[agent], Path(tmp) / f"{agent}-{i}.db", gen_rate)
                for i in range(args.runs)
            ]

            def med(key: str, runs: list[dict[str, float]] = runs) -> float:
                return statistics.median(r[key] for r in runs)

            print(
                f"| {agent} | {len(runs)} | {sum(int(r['success']) for r in runs)} "
                f"| {med('wall'):.1f} | {med('calls'):.0f} | {med('prompt'):.1f} "
                f"| {med('generation'):.1f} | {med('framework'):.1f} "
                f"| {med('prompt_tokens'):.0f} | {med('cached_tokens'):.0f} |"
            )


if __name__ == "__main__":
    main()
