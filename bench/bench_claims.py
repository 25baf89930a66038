"""Precision and recall of the hallucinated-action detector on the labelled sets.

Sets: ``tests/evals`` (claims_set: Noema tools, hand-written and recorded runs, used for
development) and ``foreign`` (claims_foreign: tools of six other domains, written before the
tool-reading detector). Prints one row per set and, with ``--wrong``, the misjudged examples.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_claims.py [--wrong]
"""

from __future__ import annotations

import sys

from tests.claims.claims_foreign import foreign_set
from tests.claims.claims_set import Labelled, detector_score, labelled_set


def main() -> None:
    """Print the figures of each set."""
    show = "--wrong" in sys.argv
    print("| set | examples | hallucinated | precision | recall |")
    print("|---|---:|---:|---:|---:|")
    misjudged: list[Labelled] = []
    for name, examples in (("tests/evals", labelled_set()), ("foreign", foreign_set())):
        precision, recall, wrong = detector_score(examples)
        positives = sum(e.hallucinated for e in examples)
        print(f"| {name} | {len(examples)} | {positives} | {precision:.3f} | {recall:.3f} |")
        misjudged += wrong
    if show:
        for example in misjudged:
            kind = "missed" if example.hallucinated else "false alarm"
            print(f"{kind:11} {example.id} [{example.note}] {example.trajectory.final_output!r}")


if __name__ == "__main__":
    main()
