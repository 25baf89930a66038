"""The change journal's cost on a write tool call (issue 37 target: at most 10%).

Two copies of the sample store: one at schema 2 (no journal: no tables, no triggers), one
at schema 3. Each write operation runs N times on both, interleaved in rounds so that the
machine's load falls on both alike; the figure is the median per call.

- ``op``: the operation alone in an open store (``call`` on schema 2 against
  ``call_journaled`` on schema 3: the undo check, the context row, the triggers' rows).
- ``tool``: the whole domain tool call as an agent makes it (open the store, run, close),
  inside a run scope (journaled) on schema 3, against the same handler on schema 2 outside
  a run (nothing journaled; the handler's open does not migrate a schema-2 store because
  it is given only migrations 1-2 here).

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_journal_overhead.py [--calls 300]
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from noema_graph.noema.demo import write_demo_data  # noqa: E402  # after the path
from noema_graph.noema.journal import ChangeContext  # noqa: E402
from noema_graph.noema.journal_schema import CONTEXT_TABLE, JOURNAL_TABLE  # noqa: E402
from noema_graph.noema.schema import MIGRATIONS  # noqa: E402
from noema_graph.noema.store import LearningStore  # noqa: E402

ROUNDS = 10


def arguments(name: str, i: int) -> dict[str, Any]:
    """Return the i-th call's arguments: each call changes rows (no no-op updates)."""
    card = 1 + i % 150
    return {
        "move_card": {"card_id": card, "category_id": 1 + (i // 150 + card) % 11},
        "flag_card": {"card_id": card, "reason": f"reason {i}", "severity": "low"},
        "update_card": {"card_id": card, "back": f"back {i}"},
        "record_review": {
            "user_id": 1 + i % 3,
            "card_id": card,
            "rating": 1 + i % 4,
            "response_time_ms": 1000 + i,
        },
        "link_concepts": {"source": f"idea {i}", "target": f"idea {i + 1}", "kind": "related_to"},
        "create_cards": {"deck_id": 1, "cards": [{"front": f"Q{i}?", "back": "A"}] * 2},
    }[name]


def without_journal(path: Path) -> None:
    """Take a schema-3 SQLite store back to schema 2: no journal tables, no triggers."""
    with sqlite3.connect(path) as conn:
        triggers = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_journal_%'"
        ).fetchall()
        for (name,) in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute(f"DROP TABLE {JOURNAL_TABLE}")
        conn.execute(f"DROP TABLE {CONTEXT_TABLE}")
        conn.execute("DELETE FROM schema_version WHERE version = 3")
    with LearningStore.open(path, migrations=MIGRATIONS[:2]) as plain:
        assert plain.schema_version() == 2


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    names = [
        "move_card", "flag_card", "update_card", "record_review", "link_concepts", "create_cards"
    ]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        old = Path(folder) / "v2.db"
        new = Path(folder) / "v3.db"
        write_demo_data(old)
        write_demo_data(new)
        without_journal(old)
        print(f"{'operation':14} {'op v2':>9} {'op v3':>9} {'op +%':>6}"
              f" {'tool v2':>9} {'tool v3':>9} {'tool +%':>7}")  # fmt: skip
        worst = 0.0
        for name in names:
            times: dict[str, list[float]] = {"op2": [], "op3": [], "tool2": [], "tool3": []}
            counter = itertools.count()
            with (
                LearningStore.open(old, migrations=MIGRATIONS[:2]) as plain,
                LearningStore.open(new) as journaled,
            ):
                per_round = max(1, args.calls // ROUNDS)
                for _ in range(ROUNDS):
                    for _ in range(per_round):
                        i = next(counter)
                        a = arguments(name, i)
                        context = ChangeContext("bench", f"c{i}", name, step=i)
                        times["op2"].append(timed(lambda a=a: plain.call(name, **a)))
                        times["op3"].append(
                            timed(lambda a=a, c=context: journaled.call_journaled(name, a, c))
                        )
                    for _ in range(per_round):
                        i = next(counter)
                        a = arguments(name, i)
                        context = ChangeContext("bench", f"c{i}", name, step=i)

                        def tool2(a: dict[str, Any] = a) -> None:
                            with LearningStore.open(old, migrations=MIGRATIONS[:2]) as s:
                                s.call(name, **a)

                        def tool3(a: dict[str, Any] = a, c: ChangeContext = context) -> None:
                            with LearningStore.open(new) as s:
                                s.call_journaled(name, a, c)

                        times["tool2"].append(timed(tool2))
                        times["tool3"].append(timed(tool3))
            med = {k: statistics.median(v) * 1000 for k, v in times.items()}
            op = 100 * (med["op3"] / med["op2"] - 1)
            tool = 100 * (med["tool3"] / med["tool2"] - 1)
            worst = max(worst, tool)
            print(
                f"{name:14} {med['op2']:8.3f}ms {med['op3']:8.3f}ms {op:+5.1f}%"
                f" {med['tool2']:8.3f}ms {med['tool3']:8.3f}ms {tool:+6.1f}%"
            )
        print(f"worst tool-call overhead: {worst:+.1f}%")


if __name__ == "__main__":
    main()
