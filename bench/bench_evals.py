"""Benchmark the evaluation package.

1. The hallucinated-action detector on the labelled set (``tests/evals/data``): precision and
   recall, overall and per part (hand-written, from Noema runs), and the examples it gets wrong.
2. With ``--llm``: the Noema task set on the embedded model, per agent: final score,
   trajectory score, tool precision/recall, violations, hallucinations, seconds per item.

Usage: ``PYTHONPATH=$PWD .venv/bin/python bench/bench_evals.py [--llm] [--per-agent N]
[--agents learning,calibration]``
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from noema_graph.evals import (
    NOEMA_TASKS,
    TrajectoryEvaluator,
    hallucinated_actions,
    load_dataset,
    run_items,
    summarize,
)
from noema_graph.evals.runner import tool_schemas
from tests.claims.claims_set import labelled_set


def detector() -> None:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # tp fp fn tn
    wrong: list[str] = []
    for example in labelled_set():
        found = bool(hallucinated_actions(example.trajectory))
        part = "from Noema runs" if example.id.startswith("run-") else "hand-written"
        index = (0 if found else 2) if example.hallucinated else (1 if found else 3)
        for key in (part, "all"):
            counts[key][index] += 1
        if found != example.hallucinated:
            kind = "missed" if example.hallucinated else "false alarm"
            wrong.append(f"- {example.id} ({kind}): {str(example.trajectory.final_output)[:90]}")
    print("| part | examples | positives | TP | FP | FN | precision | recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for part in ("hand-written", "from Noema runs", "all"):
        tp, fp, fn, tn = counts[part]
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        print(
            f"| {part} | {tp + fp + fn + tn} | {tp + fn} | {tp} | {fp} | {fn} | "
            f"{precision:.3f} | {recall:.3f} |"
        )
    print("\nWrong answers:\n" + ("\n".join(wrong) or "- none"))


def _cell(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def agents(selected: list[str] | None, per_agent: int) -> None:
    from noema_graph.models import make_model
    from noema_graph.noema import write_demo_data

    items = load_dataset(NOEMA_TASKS).dataset
    taken: dict[str, int] = defaultdict(int)
    chosen = []
    for item in items:
        name = item.tag("agent") or ""
        if (selected is None or name in selected) and taken[name] < per_agent:
            taken[name] += 1
            chosen.append(item)
    model = make_model("local")
    model.invoke("Say ok.")  # start the server outside the timed runs
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        master = Path(tmp) / "demo.sqlite"
        write_demo_data(master)
        for item, trajectory in run_items(
            chosen, agent=None, model_for=lambda _i: model, master=master, workdir=Path(tmp)
        ):
            name = item.tag("agent") or ""
            evaluator = TrajectoryEvaluator(
                trajectory_match="superset",
                args_match="superset",
                final_scorer="json_subset",
                tolerance=0.01,
                tools=tool_schemas(name),
            )
            results.append(evaluator.score(item, trajectory))
            print(f"  {item.id}: final {results[-1].final_score}", flush=True)
    summary = summarize(results)
    print("\n| agent | items | final | trajectory | tool P | tool R | violations | halluc. | s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, group in [*summary["by_agent"].items(), ("all", summary)]:
        print(
            f"| {name} | {group['scored']} | {_cell(group['final_score'])} | "
            f"{_cell(group['trajectory_score'])} | {_cell(group['tool_precision'])} | "
            f"{_cell(group['tool_recall'])} | {group['violations']} | "
            f"{group['hallucinations']} | {_cell(group['seconds_per_item'], 1)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark the evaluation package.")
    parser.add_argument("--llm", action="store_true", help="Also run the task set on the model.")
    parser.add_argument("--per-agent", type=int, default=4, help="Tasks per agent (--llm).")
    parser.add_argument("--agents", default="", help="Comma-separated agents (--llm).")
    args = parser.parse_args()
    if args.per_agent < 1:
        parser.error("--per-agent must be at least 1")
    versions = ", ".join(
        f"{n} {importlib.metadata.version(n)}" for n in ("langgraph", "agentevals", "xllamacpp")
    )
    print(f"Machine: {platform.machine()}, Python {platform.python_version()}; {versions}\n")
    detector()
    if args.llm:
        print()
        agents([a for a in args.agents.split(",") if a] or None, args.per_agent)


if __name__ == "__main__":
    main()
