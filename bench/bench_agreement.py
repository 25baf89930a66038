"""Agreement of ``trajectory_matches`` with agentevals on generated message-list pairs.

For every one of the 16 combinations of agentevals' trajectory and argument modes, each
(output, reference) pair of OpenAI-style message lists (tests/evals/message_pairs.py) is
scored by ``agentevals.trajectory.match.create_trajectory_match_evaluator`` and by
``trajectory_matches`` on ``Trajectory.from_messages`` of both lists. Also counted: how
often the first version's reading (every call flattened into a message of its own) differs.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_agreement.py [PAIRS_PER_SEED] [SEEDS]
"""

from __future__ import annotations

import itertools
import sys
import time
from typing import Any

from agentevals.trajectory.match import create_trajectory_match_evaluator

from noema_graph.evals import Trajectory, trajectory_matches
from noema_graph.evals.matching import AGENTEVALS_MATCHES, ARGS_MATCHES
from tests.evals.message_pairs import message_pairs


def main() -> None:
    """Print one row per mode combination and the totals."""
    per_seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    pairs = [p for seed in range(seeds) for p in message_pairs(per_seed, seed=1000 + seed)]
    read = [(Trajectory.from_messages(o), Trajectory.from_messages(r)) for o, r in pairs]
    flat = [(o.tool_calls(), r.tool_calls()) for o, r in read]
    print(
        "| trajectory | args | pairs | agentevals true | disagreements | flattened: disagreements |"
    )
    print("|---|---|---:|---:|---:|---:|")
    total = wrong = old = 0
    ours_s = theirs_s = 0.0
    modes: list[Any] = list(itertools.product(AGENTEVALS_MATCHES, ARGS_MATCHES))
    for mode, args_mode in modes:
        evaluator: Any = create_trajectory_match_evaluator(
            trajectory_match_mode=mode, tool_args_match_mode=args_mode
        )
        started = time.perf_counter()
        theirs = [bool(evaluator(outputs=o, reference_outputs=r)["score"]) for o, r in pairs]
        theirs_s += time.perf_counter() - started
        started = time.perf_counter()
        ours = [
            trajectory_matches(o, r, trajectory_match=mode, args_match=args_mode) for o, r in read
        ]
        ours_s += time.perf_counter() - started
        flattened = [
            trajectory_matches(o, r, trajectory_match=mode, args_match=args_mode) for o, r in flat
        ]
        bad = sum(a != b for a, b in zip(ours, theirs, strict=True))
        before = sum(a != b for a, b in zip(flattened, theirs, strict=True))
        total, wrong, old = total + len(pairs), wrong + bad, old + before
        print(f"| {mode} | {args_mode} | {len(pairs)} | {sum(theirs)} | {bad} | {before} |")
    print(f"| all | | {total} | | {wrong} | {old} |")
    print(f"\nscoring time: noema {ours_s:.2f} s, agentevals {theirs_s:.2f} s ({total} pairs each)")


if __name__ == "__main__":
    main()
