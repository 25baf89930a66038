"""The change journal's cost on a write tool call (issue 37 target: at most 10%).

Two copies of the sample store: one taken back to schema 2 (no journal: no tables, no
triggers), one at the newest schema (the journal). Each write operation runs N times on both,
interleaved in rounds so that the machine's load falls on both alike; each figure is the median
per call.

- ``op``: the operation alone in an open store (``call`` on schema 2 against
  ``call_journaled`` on the newest schema: the change set, the triggers' rows).
- ``handler``: the domain tool's handler as it runs today (open the store, run, close): a
  new SQLite connection per call, which parses the schema, triggers included.
- ``tool``: the call as an agent makes it: the LangChain tool of the ToolSpec, through the
  ToolRunner (validation, worker thread, ToolResult, observation), inside a run scope (as
  ``tool_node`` sets for every call) on both schemas; journaled on the newest only.
- ``tool CPU``: the same calls' CPU time (the process's, worker thread included), which a
  loaded machine's waits for a core do not inflate.

The handler keeps its SQLite connection between calls (``pooled=True``) on both schemas.

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_journal_overhead.py [--calls 300]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import shutil
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

from noema_graph.agents.domain_tools import domain_spec  # noqa: E402  # after the path
from noema_graph.context import RunContext, RunScope, run_scope  # noqa: E402
from noema_graph.noema.demo import write_demo_data  # noqa: E402
from noema_graph.noema.journal import ChangeContext  # noqa: E402
from noema_graph.noema.journal_schema import CONTEXT_TABLE, JOURNAL_TABLE, SETS_TABLE  # noqa: E402
from noema_graph.noema.operations import DOMAIN_OPERATIONS  # noqa: E402
from noema_graph.noema.schema import MIGRATIONS  # noqa: E402
from noema_graph.noema.store import LearningStore  # noqa: E402
from noema_graph.tools.langchain_tool import to_langchain_tool  # noqa: E402
from noema_graph.tools.runner import ToolRunner  # noqa: E402
from noema_graph.tools.spec import ToolContext, ToolSpec  # noqa: E402

ROUNDS = 10
NAMES = ("move_card", "flag_card", "update_card", "record_review", "link_concepts", "create_cards")


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
    """Take a journaled SQLite store back to schema 2: no journal tables, no triggers."""
    with sqlite3.connect(path) as conn:
        triggers = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_journal_%'"
        ).fetchall()
        for (name,) in triggers:
            conn.execute(f"DROP TRIGGER {name}")
        tables = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?)",
            (JOURNAL_TABLE, SETS_TABLE, CONTEXT_TABLE),
        ).fetchall()
        for (name,) in tables:
            conn.execute(f"DROP TABLE {name}")
        conn.execute("DELETE FROM schema_version WHERE version > 2")
    with LearningStore.open(path, migrations=MIGRATIONS[:2]) as plain:
        assert plain.schema_version() == 2


def schema2_handler(name: str, db: Path) -> Callable[..., Any]:
    """The domain handler of before the journal: open (schema 2), call, close."""

    def handle(**a: Any) -> Any:
        with LearningStore.open(db, migrations=MIGRATIONS[:2], pooled=True) as store:
            return store.call(name, **a)

    return handle


def tool_of(spec: ToolSpec) -> Any:
    runner = ToolRunner(ToolContext(permissions=frozenset({"fs:read", "fs:write"})))
    return to_langchain_tool(spec, runner, max_observation_chars=100_000)


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    """Return the wall-clock and the CPU seconds of ``call()``."""
    start, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - start, time.process_time() - cpu


def tool_pair(name: str, old: Path, new: Path) -> tuple[ToolSpec, ToolSpec]:
    """Return the tool specs of ``name`` before the journal (on ``old``) and with it."""
    journaled = domain_spec(name, new)
    plain = ToolSpec(
        name=name,
        description=journaled.description,
        input_schema=DOMAIN_OPERATIONS[name].input_model,
        handler=schema2_handler(name, old),
        permission=journaled.permission,
        idempotency=journaled.idempotency,
    )
    return plain, journaled


def measure(name: str, files: dict[str, tuple[Path, Path]], calls: int) -> dict[str, float]:
    """Return the median seconds per call of each level on both schemas.

    Each level writes its own pair of files, as one agent's tool calls write through one
    connection: a write from another connection would make the next call reload SQLite's
    page cache (and the journal's pages with it), which the call alone does not pay.
    """
    keys = ("op2", "op3", "h2", "h3", "t2", "t3", "c2", "c3")
    times: dict[str, list[float]] = {k: [] for k in keys}
    counter = itertools.count()
    old, new = files["op"]
    spec2, spec3 = tool_pair(name, *files["handler"])
    tool2, tool3 = (tool_of(spec) for spec in tool_pair(name, *files["tool"]))
    with (
        LearningStore.open(old, migrations=MIGRATIONS[:2]) as plain,
        LearningStore.open(new) as journaled,
    ):
        for n in range(ROUNDS * max(1, calls // ROUNDS)):
            first = n % 2 == 0  # which schema goes first alternates: neither pays for the other
            i = next(counter)
            a, c = arguments(name, i), ChangeContext("bench", f"c{i}", name, step=i)
            pair: list[tuple[str, Callable[[], Any]]] = [
                ("op2", functools.partial(plain.call, name, **a)),
                ("op3", functools.partial(journaled.call_journaled, name, a, c)),
            ]
            for key, run in pair if first else pair[::-1]:
                times[key].append(timed(run)[0])
            i = next(counter)
            a = arguments(name, i)
            scope = RunScope("trace", "run", RunContext(), thread_id="bench", call_id=f"c{i}")

            def h3(a: dict[str, Any] = a, scope: RunScope = scope) -> None:
                with run_scope(scope):
                    spec3.handler(**a)

            def h2(a: dict[str, Any] = a, scope: RunScope = scope) -> None:
                with run_scope(scope):
                    spec2.handler(**a)

            pair = [("h2", h2), ("h3", h3)]
            for key, run in pair if first else pair[::-1]:
                times[key].append(timed(run)[0])
            i = next(counter)
            call = {"name": name, "args": arguments(name, i), "id": f"c{i}", "type": "tool_call"}
            scope = RunScope("trace", "run", RunContext(), thread_id="bench", call_id=f"c{i}")

            def t3(call: dict[str, Any] = call, scope: RunScope = scope) -> None:
                with run_scope(scope):
                    tool3.invoke(call)

            def t2(call: dict[str, Any] = call, scope: RunScope = scope) -> None:
                with run_scope(scope):
                    tool2.invoke(call)

            pair = [("t2", t2), ("t3", t3)]
            for key, run in pair if first else pair[::-1]:
                wall, cpu = timed(run)
                times[key].append(wall)
                times[key.replace("t", "c")].append(cpu)
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        sample = Path(folder) / "sample.db"
        write_demo_data(sample)
        files: dict[str, tuple[Path, Path]] = {}
        for level in ("op", "handler", "tool"):
            old, new = Path(folder) / f"{level}-v2.db", Path(folder) / f"{level}-new.db"
            shutil.copy(sample, old)
            shutil.copy(sample, new)
            without_journal(old)
            files[level] = (old, new)
        heads = ("op", "handler", "tool call", "tool CPU")
        print(f"{'operation':14}" + "".join(f"{h:>22}" for h in heads))
        worst: dict[str, float] = {"op": 0.0, "handler": 0.0, "tool": 0.0, "tool CPU": 0.0}
        for name in NAMES:
            med = measure(name, files, args.calls)
            cells = ""
            for level, (a, b) in {
                "op": ("op2", "op3"), "handler": ("h2", "h3"), "tool": ("t2", "t3"),
                "tool CPU": ("c2", "c3"),
            }.items():  # fmt: skip
                extra = 100 * (med[b] / med[a] - 1)
                worst[level] = max(worst[level], extra)
                cells += f"  {med[a]:5.2f}->{med[b]:5.2f}ms {extra:+5.0f}%"
            print(f"{name:14}{cells}")
        print("worst: " + ", ".join(f"{k} {v:+.0f}%" for k, v in worst.items()))


if __name__ == "__main__":
    main()
