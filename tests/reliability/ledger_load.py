"""Load on one SQLite file: async runs in this process, sync runs in worker processes.

Every run calls a non-idempotent ``charge`` tool :data:`CALLS` times; each execution appends
one line to an effects file (``O_APPEND``, so lines from many processes never mix). The file's
Store shares the checkpoint file, as the manual allows (docs/persistence.md). Used by
``tests/reliability/test_ledger_concurrency.py`` and ``bench/bench_ledger.py``.

Worker: ``python -m tests.reliability.ledger_load DB EFFECTS PREFIX THREADS REPORT``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from noema_graph import build_agent_graph
from noema_graph.persistence import (
    async_sqlite_checkpointer,
    async_sqlite_store,
    sqlite_checkpointer,
    sqlite_store,
)
from noema_graph.storage.ledger import entries
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

CALLS = 3
"""Non-idempotent calls per run."""
ROOT = Path(__file__).resolve().parents[2]


def charge_tool(effects: Path) -> BaseTool:
    """A non-idempotent tool whose every execution appends ``run:n`` to ``effects``."""

    @tool
    def charge(run: str, n: int) -> str:
        """Charge the customer of ``run`` (must never happen twice)."""
        fd = os.open(effects, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{run}:{n}\n".encode())
        finally:
            os.close(fd)
        return f"charged {run}:{n}"

    charge.metadata = {"idempotency": "non_idempotent"}
    return charge


def model_for(run: str) -> ScriptedChatModel:
    """A scripted model: a plan, CALLS charge calls one per step, then an answer."""
    calls = [tools_reply(call("charge", {"run": run, "n": n}, f"{run}-c{n}")) for n in range(CALLS)]
    return ScriptedChatModel(script=[plan_reply("charge"), *calls, text("charged")])


def config(run: str) -> RunnableConfig:
    return {"configurable": {"thread_id": run}}


def request() -> dict[str, Any]:
    return {"messages": [("user", "charge the customer")]}


@dataclass
class Problems:
    """What went wrong in one process: warnings logged by noema_graph and escaped errors."""

    warnings: list[str] = field(default_factory=list[str])
    errors: list[str] = field(default_factory=list[str])

    def merge(self, other: Problems) -> None:
        self.warnings += other.warnings
        self.errors += other.errors


class _Collect(logging.Handler):
    def __init__(self, problems: Problems) -> None:
        super().__init__(logging.WARNING)
        self.problems = problems
        self.lock_ = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        with self.lock_:
            self.problems.warnings.append(f"{record.name}: {record.getMessage()}")


@contextmanager
def collecting() -> Iterator[Problems]:
    """Collect every warning noema_graph logs while the block runs."""
    problems = Problems()
    handler = _Collect(problems)
    logger = logging.getLogger("noema_graph")
    logger.addHandler(handler)
    try:
        yield problems
    finally:
        logger.removeHandler(handler)


async def async_runs(db: Path, effects: Path, prefix: str, count: int) -> Problems:
    """Run ``count`` agents concurrently on ``db`` (async checkpointer and Store)."""
    charge = charge_tool(effects)
    with collecting() as problems:
        async with async_sqlite_checkpointer(db) as saver, async_sqlite_store(db) as store:

            async def one(run: str) -> None:
                graph = build_agent_graph(
                    cfg(reflection_interval=10),
                    model=model_for(run),
                    tools=[charge],
                    checkpointer=saver,
                    store=store,
                )
                await graph.ainvoke(request(), config(run))

            runs = [f"{prefix}{i}" for i in range(count)]
            results = await asyncio.gather(*(one(r) for r in runs), return_exceptions=True)
    problems.errors += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    return problems


def thread_runs(db: Path, effects: Path, prefix: str, count: int) -> Problems:
    """Run ``count`` agents on ``count`` threads of this process (sync, one file)."""
    charge = charge_tool(effects)
    errors: list[str] = []
    with collecting() as problems, sqlite_checkpointer(db) as saver, sqlite_store(db) as store:

        def one(run: str) -> None:
            graph = build_agent_graph(
                cfg(reflection_interval=10),
                model=model_for(run),
                tools=[charge],
                checkpointer=saver,
                store=store,
            )
            try:
                graph.invoke(request(), config(run))
            except Exception as exc:  # counted: what this load test looks for
                errors.append(f"{type(exc).__name__}: {exc}")

        workers = [threading.Thread(target=one, args=(f"{prefix}{i}",)) for i in range(count)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    problems.errors += errors
    return problems


def start_workers(
    db: Path, effects: Path, reports: Path, *, processes: int, threads: int
) -> list[tuple[subprocess.Popen[bytes], Path]]:
    """Start ``processes`` worker processes running ``threads`` sync runs each."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for p in range(processes):
        report = reports / f"p{p}.json"
        args = [str(db), str(effects), f"p{p}-", str(threads), str(report)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.ledger_load", *args], cwd=ROOT, env=env
        )
        started.append((proc, report))
    return started


def join_workers(started: list[tuple[subprocess.Popen[bytes], Path]]) -> Problems:
    """Wait for the workers; merge their reports (a worker that died is an error)."""
    problems = Problems()
    for proc, report in started:
        code = proc.wait(timeout=600)
        if code != 0 or not report.exists():
            problems.errors.append(f"worker {report.stem} exited with {code}")
            continue
        data = json.loads(report.read_text())
        problems.merge(Problems(warnings=data["warnings"], errors=data["errors"]))
    return problems


@dataclass
class Outcome:
    """What the file and the effects log hold once every run has ended."""

    run_ids: list[str]
    executions: Counter[str]
    lost_checkpoints: list[str]
    refused: list[str]
    ledger_not_done: list[str]

    @property
    def repeated(self) -> list[str]:
        """Calls that ran more than once."""
        return [key for key, n in self.executions.items() if n > 1]

    @property
    def missing(self) -> list[str]:
        """Calls that never ran."""
        return [
            f"{run}:{n}"
            for run in self.run_ids
            for n in range(CALLS)
            if self.executions[f"{run}:{n}"] == 0
        ]


def outcome(db: Path, effects: Path, runs: list[str]) -> Outcome:
    """Read every run's final checkpoint and ledger entries, and the effects log."""
    lines = effects.read_text().split() if effects.exists() else []
    lost: list[str] = []
    refused: list[str] = []
    not_done: list[str] = []
    with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
        for run in runs:
            graph = build_agent_graph(cfg(), model=model_for(run), tools=[], checkpointer=saver)
            values = graph.get_state(config(run)).values  # the output is a delta channel
            output = values.get("output")
            if not output or not output.get("success"):
                lost.append(run)
                continue
            messages = values["messages"]
            refused += [
                f"{run}: {m.content}"
                for m in messages
                if isinstance(m, ToolMessage) and m.status == "error"
            ]
            recorded = entries(store, run)
            for n in range(CALLS):
                if recorded.get(f"{run}-c{n}") != "done":
                    not_done.append(f"{run}-c{n}")
    return Outcome(
        run_ids=runs,
        executions=Counter(lines),
        lost_checkpoints=lost,
        refused=refused,
        ledger_not_done=not_done,
    )


def locked(problems: Problems) -> list[str]:
    """Every warning or error that mentions a locked or busy database."""
    return [
        line
        for line in [*problems.warnings, *problems.errors]
        if "locked" in line or "busy" in line
    ]


def _worker() -> None:
    db, effects, prefix, threads, report = sys.argv[1:6]
    problems = thread_runs(Path(db), Path(effects), prefix, int(threads))
    Path(report).write_text(json.dumps({"warnings": problems.warnings, "errors": problems.errors}))


if __name__ == "__main__":
    _worker()
