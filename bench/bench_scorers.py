"""Precision and recall of the words and leak scorers on the labelled set of real answers.

    .venv/bin/python bench/bench_scorers.py

The set: ``tests/evals/data/labelled_answers.json`` (see ``tests/evals/labelled_answers.py``).
Prints the figures per kind and every false positive and false negative.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.evals.labelled_answers import load, score


def main() -> None:
    """Print the figures."""
    entries = load()
    result = score(entries)
    gold = Counter(kind for entry in entries for kind, _ in entry["labels"])
    print(f"answers: {result.answers}; labelled cases: {sum(gold.values())} {dict(gold)}")
    print(f"precision {result.precision:.3f}  recall {result.recall:.3f}")
    print("| kind | labelled | found | false positives | false negatives |")
    for kind in ("number", "entry", "name", "example", "leak"):
        fp = sum(1 for _, k, _ in result.false_positive if k == kind)
        fn = sum(1 for _, k, _ in result.false_negative if k == kind)
        print(f"| {kind} | {gold[kind]} | {gold[kind] - fn + fp} | {fp} | {fn} |")
    for name, misses in (("false positive", result.false_positive),
                         ("false negative", result.false_negative)):  # fmt: skip
        for answer, kind, where in misses:
            print(f"{name}: {answer} {kind} in {where}")


if __name__ == "__main__":
    main()
