"""SIGKILL a 6-iteration run at each of its durable writes, resume it, compare (issue 17).

Usage:
    PYTHONPATH=$PWD .venv/bin/python bench/bench_sigkill.py [--points 20]

The child process runs a scripted agent (plan, 6 calls of a non-idempotent tool, answer)
on a SQLite checkpointer and Store, and SIGKILLs itself right after its k-th durable write
(a checkpoint or a task's writes). The parent resumes the thread in a new process with the
same deterministic model and compares the final output with an uninterrupted run's; the
tool appends to a ledger file, so a repeated call shows as a repeated line.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ITERATIONS = 6
THREAD = {"configurable": {"thread_id": "kill"}}


def _model() -> Any:
    """A model whose reply depends only on the prompt (so a resumed run gets the same one):
    plan, then call mark(n+1) until 6 results exist, then answer."""
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

    from tests.scripted import ScriptedChatModel, call, plan_reply

    def step(messages: list[BaseMessage]) -> AIMessage:
        if "Tools that later steps may use" in str(messages[0].content):  # the planner
            return plan_reply("mark six times")
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if done >= ITERATIONS:
            return AIMessage(content=f"marked {done} times")
        return AIMessage(content="", tool_calls=[call("mark", {"n": done + 1}, f"c{done + 1}")])

    return ScriptedChatModel(script=[step] * (ITERATIONS + 2))


def run(db: Path, ledger: Path, kill_at: int | None) -> dict[str, Any]:
    """Run (or resume) the thread; die after the ``kill_at``-th durable write."""
    from langchain_core.tools import tool

    from noema_graph import AgentConfig, build_agent_graph, sqlite_checkpointer, sqlite_store

    @tool
    def mark(n: int) -> str:
        """Append n to the ledger."""
        with ledger.open("a") as f:
            f.write(f"{n}\n")
        return f"marked {n}"

    mark.metadata = {"idempotency": "non_idempotent"}
    config = AgentConfig(enabled_toolkits=(), max_iterations=10, reflection_interval=100)
    with sqlite_checkpointer(db) as saver, sqlite_store(db) as store:
        if kill_at is not None:
            _die_after(saver, kill_at)
        graph = build_agent_graph(
            config, model=_model(), tools=[mark], checkpointer=saver, store=store
        )
        resuming = saver.get_tuple(THREAD) is not None
        inputs = None if resuming else {"messages": [("user", "mark six times")]}
        state = graph.invoke(inputs, THREAD)
    return {"result": state["output"]["result"], "success": state["output"]["success"]}


def _die_after(saver: Any, writes: int) -> None:
    count = [0]
    for name in ("put", "put_writes"):
        original = getattr(saver, name)

        def wrapped(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            result = _original(*args, **kwargs)
            count[0] += 1
            if count[0] >= writes:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        setattr(saver, name, wrapped)


def child(db: str, ledger: str, kill_at: str) -> None:
    """Entry point of the child process: print the output as JSON when it survives."""
    out = run(Path(db), Path(ledger), None if kill_at == "-" else int(kill_at))
    print(json.dumps(out))


def _spawn(db: Path, ledger: Path, kill_at: int | None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, __file__, "--child", str(db), str(ledger), str(kill_at or "-")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        clean = _spawn(base / "clean.sqlite", base / "clean.txt", None)
        expected = json.loads(clean.stdout.strip().splitlines()[-1])
        rows = []
        for k in range(1, args.points + 1):
            db, ledger = base / f"k{k}.sqlite", base / f"k{k}.txt"
            killed = _spawn(db, ledger, k)
            resumed = _spawn(db, ledger, None)
            out = json.loads(resumed.stdout.strip().splitlines()[-1]) if resumed.stdout else {}
            lines = ledger.read_text().split() if ledger.exists() else []
            repeated = len(lines) - len(set(lines))
            rows.append((k, killed.returncode, out == expected, repeated, len(set(lines))))
    same = sum(r[2] for r in rows)
    repeats = sum(r[3] for r in rows)
    print(f"expected output: {expected}")
    print("| kill after write | child exit | same output | repeated calls | distinct calls |")
    print("| ---: | ---: | --- | ---: | ---: |")
    for k, code, ok, rep, distinct in rows:
        print(f"| {k} | {code} | {'yes' if ok else 'NO'} | {rep} | {distinct} |")
    print(f"\n{same}/{len(rows)} identical final outputs, {repeats} repeated non-idempotent calls")


if __name__ == "__main__":
    main()
