"""Many processes approve the same paused run at the same instant (the thread lease's test).

Each round has its own thread, paused before a non-idempotent ``charge`` call
(``confirm_tools``) by :func:`pause`. Every worker process builds the graph, computes
``resume_with(graph, config, "approve")`` while the run is paused, waits at the round's
barrier (a FIFO: one byte per worker releases them all at once), then invokes the graph. It
writes what happened to ``result-<round>-<worker>``: ``ran`` (its run charged), ``busy``
(:class:`ThreadBusy`), or ``late`` (it ran after the winner and found nothing to do).

Under ``reject`` the charge waits until every other worker of the round has written its
result, so all of them meet the winner's lease. Every execution of the charge appends a line
to ``effects``. Used by ``tests/reliability/test_thread_lease.py`` and
``bench/bench_resume_race.py``.

Worker: ``python -m tests.reliability.resume_race FOLDER DB WORKER WORKERS ROUNDS STRATEGY``.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool

from noema_graph import build_agent_graph
from noema_graph.effects import drive
from noema_graph.hitl import resume_with
from noema_graph.storage.backends import open_backend
from noema_graph.storage.lease import ThreadBusy
from noema_graph.storage.ledger import claim
from tests.helpers import cfg
from tests.scripted import ScriptedChatModel, call, plan_reply, text, tools_reply

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 300.0
"""Longest wait for a condition (the other workers, the barrier) before giving up: 16
processes importing and opening a backend on a loaded 2-core machine take a minute or two."""


def thread_of(round_: int) -> str:
    """Return the thread id of ``round_``."""
    return f"race-{round_}"


def config(round_: int, strategy: str = "reject") -> Any:
    """Return the run config of ``round_`` under the multitask ``strategy``."""
    return {"configurable": {"thread_id": thread_of(round_), "multitask_strategy": strategy}}


def wait_for(condition: Any, what: str) -> None:
    """Wait until ``condition()`` holds (polling a file system condition), or fail."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.002)


def charge_tool(folder: Path, workers: int, strategy: str) -> BaseTool:
    """A non-idempotent tool: appends to ``effects``; under reject waits for the others."""

    @tool
    def charge(round: int) -> str:
        """Charge the customer of round ``round`` (must never happen twice)."""
        fd = os.open(folder / "effects", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{round}\n".encode())
        finally:
            os.close(fd)
        if strategy == "reject":  # hold the lease until every other worker has met it
            wait_for(lambda: len(results(folder, round)) >= workers - 1, "the other workers")
        return f"charged {round}"

    charge.metadata = {"idempotency": "non_idempotent"}
    return charge


def graph_for(backend: Any, folder: Path, workers: int, strategy: str, model: Any) -> Any:
    """The agent graph whose ``charge`` calls wait for approval."""
    return build_agent_graph(
        cfg(reflection_interval=10, confirm_tools=("charge",)),
        model=model,
        tools=[charge_tool(folder, workers, strategy)],
        checkpointer=backend.checkpointer,
        store=backend.store,
    )


def pause(db: str, folder: Path, rounds: int) -> None:
    """Run each round's thread until it pauses before its charge."""
    with open_backend(db) as backend:
        for round_ in range(rounds):
            model = ScriptedChatModel(
                script=[plan_reply("charge"), tools_reply(call("charge", {"round": round_}, "c1"))]
            )
            graph = graph_for(backend, folder, 1, "reject", model)
            state = graph.invoke({"messages": [("user", "charge")]}, config(round_))
            assert state["__interrupt__"], "the run did not pause"


def results(folder: Path, round_: int) -> list[str]:
    """Return the results written for ``round_`` so far."""
    return [p.read_text() for p in folder.glob(f"result-{round_}-*") if p.read_text()]


def _outcome(state: dict[str, Any]) -> str:
    charged = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.name == "charge"]
    return "ran" if charged and charged[-1].status == "success" else "refused"


def _one_round(
    backend: Any, folder: Path, worker: int, workers: int, round_: int, strategy: str
) -> str:
    model = ScriptedChatModel(script=[text("charged")])
    graph = graph_for(backend, folder, workers, strategy, model)
    run_config = config(round_, strategy)
    command = resume_with(graph, run_config, "approve")  # while the run is paused
    _barrier(folder, worker, round_)
    try:
        state = graph.invoke(command, run_config)
    except ThreadBusy:
        return "busy"
    return _outcome(state) if model.prompts else "late"


def _one_claim(backend: Any, folder: Path, worker: int, round_: int) -> str:
    """Claim round ``round_``'s call straight in the ledger (no run, no lease)."""
    _barrier(folder, worker, round_)
    refusal = drive(claim(backend.store, thread_of(round_), {"id": "c1", "name": "charge"}))
    return "won" if refusal is None else "refused"


def _barrier(folder: Path, worker: int, round_: int) -> None:
    barrier = os.open(folder / f"go-{round_}", os.O_RDONLY)  # the test holds a write end
    try:
        (folder / f"ready-{round_}-{worker}").touch()
        os.read(barrier, 1)  # blocks until the test writes one byte per worker
    finally:
        os.close(barrier)


def worker() -> None:
    """Run every round as one of the racing processes."""
    folder, db = Path(sys.argv[1]), sys.argv[2]
    index, workers, rounds, strategy = map(str, sys.argv[3:7])
    with open_backend(db) as backend:
        for round_ in range(int(rounds)):
            if strategy == "claim":
                outcome = _one_claim(backend, folder, int(index), round_)
            else:
                outcome = _one_round(backend, folder, int(index), int(workers), round_, strategy)
            (folder / f"tmp-{round_}-{index}").write_text(outcome)
            os.replace(folder / f"tmp-{round_}-{index}", folder / f"result-{round_}-{index}")


def race(
    db: str,
    folder: Path,
    *,
    workers: int,
    rounds: int,
    strategy: str,
    timings: list[float] | None = None,
) -> list[list[str]]:
    """Run ``rounds`` races of ``workers`` processes on ``db``; return each round's outcomes.

    ``strategy``: ``reject`` or ``enqueue`` (resumes of a paused run), or ``claim`` (ledger
    claims of one call, straight, without a run or a lease). ``timings`` receives each
    round's seconds from the barrier's release to the last result.
    """
    if strategy != "claim":
        pause(db, folder, rounds)
    barriers: list[int] = []
    for round_ in range(rounds):
        os.mkfifo(folder / f"go-{round_}")
        barriers.append(os.open(folder / f"go-{round_}", os.O_RDWR))  # readers never block
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [str(folder), db, "", str(workers), str(rounds), strategy]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.resume_race", *args[:2], str(n), *args[3:]],
            cwd=ROOT,
            env=env,
        )
        for n in range(workers)
    ]
    try:
        for round_ in range(rounds):
            ready = functools.partial(_count, folder, f"ready-{round_}-*", procs, workers)
            wait_for(ready, f"{workers} workers ready for round {round_}")
            started = time.perf_counter()
            os.write(barriers[round_], b"x" * workers)  # all of them at once
            done = functools.partial(_count, folder, f"result-{round_}-*", procs, workers)
            wait_for(done, f"round {round_}")
            if timings is not None:
                timings.append(time.perf_counter() - started)
    except BaseException:
        for proc in procs:  # a round that did not finish: stop everyone now
            proc.kill()
            proc.wait()
        raise
    finally:
        for fd in barriers:
            os.close(fd)
    for proc in procs:
        if proc.wait(timeout=WAIT_S) != 0:
            raise RuntimeError(f"worker {proc.pid} exited with {proc.returncode}")
    return [sorted(results(folder, r)) for r in range(rounds)]


def _count(folder: Path, pattern: str, procs: list[subprocess.Popen[bytes]], n: int) -> bool:
    """Return True once ``n`` files match ``pattern`` (raises when a worker failed)."""
    return _alive(procs) and len(list(folder.glob(pattern))) >= n


def _alive(procs: list[subprocess.Popen[bytes]]) -> bool:
    """Return True while no worker has failed (a failed one raises: no point waiting on)."""
    for proc in procs:
        if proc.poll() not in (None, 0):
            raise RuntimeError(f"worker {proc.pid} exited with {proc.returncode}")
    return True


def effects(folder: Path) -> list[str]:
    """Return the rounds the charge ran for, one line per execution."""
    path = folder / "effects"
    return path.read_text().split() if path.exists() else []


if __name__ == "__main__":
    worker()
