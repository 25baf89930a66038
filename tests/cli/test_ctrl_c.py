"""Ctrl-C on a real ``noema-graph`` process while a slow tool runs: once cancels, twice quits.

Each run is a subprocess (``tests/cli/launch.py``: the real CLI on a scripted model, plus a
``slow`` tool); SIGINT is sent once its tool call has started. The guards below (how long
to wait for a line or an exit) only stop a hung test; nothing asserts a duration.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from noema_graph.cli.runs import CANCELLING, thread_status
from noema_graph.inspect import history

ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 120.0


class Cli:
    """One ``noema-graph`` subprocess whose stderr is read line by line as it comes."""

    def __init__(self, cwd: Path, script: str, *args: str, **env: str) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NOEMA_"))}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.cli.launch", script, *args],
            cwd=cwd,
            env={**clean, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put("")  # end of stream

    def wait_for(self, text: str) -> None:
        """Read stderr until a line holds ``text``; fail if the stream ends first."""
        while True:
            line = self.lines.get(timeout=GUARD_S)
            self.seen.append(line)
            if text in line:
                return
            assert line, f"{text!r} never came: {''.join(self.seen)}"

    def wait_for_file(self, path: Path) -> None:
        """Wait until ``path`` exists (the slow tool touches it when it starts)."""
        deadline = time.monotonic() + GUARD_S
        while not path.exists():
            assert time.monotonic() < deadline and self.proc.poll() is None, self.finish()
            time.sleep(0.05)

    def finish(self) -> tuple[int, str, str]:
        """Wait for the exit; return the exit code, stdout and all of stderr."""
        stdout = self.proc.stdout.read() if self.proc.stdout else ""
        code = self.proc.wait(timeout=GUARD_S)
        while (line := self.lines.get(timeout=GUARD_S)) != "":
            self.seen.append(line)
        return code, stdout, "".join(self.seen)


def _resume(cwd: Path, script: str, thread: str) -> tuple[int, str, str]:
    return Cli(cwd, script, "resume", thread, "--db", "runs.sqlite").finish()


def test_one_ctrl_c_cancels_gracefully_and_resume_continues(tmp_path: Path) -> None:
    run = Cli(tmp_path, "slow", "run", "Ask slow", "--db", "runs.sqlite", "--thread", "c1",
              NOEMA_TEST_SLEEP="600")  # fmt: skip
    run.wait_for("tool slow({})")
    run.proc.send_signal(signal.SIGINT)
    code, _, stderr = run.finish()  # the abandoned 600 s call is not waited for
    assert code == 130, stderr
    assert CANCELLING in stderr and "Interrupted: the run was cancelled" in stderr
    assert "cancelled; continue with: noema-graph resume c1 --db runs.sqlite" in stderr
    assert "Traceback" not in stderr
    status, output = thread_status(tmp_path / "runs.sqlite", "c1")
    assert (status, output["error"]["code"]) == ("cancelled", "cancelled")  # finalized, kept

    code, stdout, stderr = _resume(tmp_path, "after-slow", "c1")
    assert code == 0, stderr
    assert stdout == "the answer is 42\n"
    assert "tool slow({})" in stderr and "-> ok" in stderr  # the cut call ran again, to its end
    status, output = thread_status(tmp_path / "runs.sqlite", "c1")
    assert status == "finished" and output["success"]
    steps = output["reasoning"]["steps"]
    assert [s["observation"] for s in steps if s["kind"] == "tool"] == ["42"]

    code, stdout, stderr = _resume(tmp_path, "none", "c1")  # no model call is scripted
    assert code == 0 and "already finished successfully" in stderr and "42" in stdout


def test_a_second_ctrl_c_quits_at_once_and_resume_continues(tmp_path: Path) -> None:
    # the abort switch is polled only every 600 s: the first Ctrl-C cannot end the call
    mark = tmp_path / "started"
    run = Cli(tmp_path, "slow", "run", "Ask slow", "--db", "runs.sqlite", "--thread", "c2",
              NOEMA_TEST_SLEEP="600", NOEMA_TEST_ABORT_POLL="600",
              NOEMA_TEST_MARK=str(mark))  # fmt: skip
    run.wait_for("tool slow({})")
    # the line comes before the call's last abort check: a Ctrl-C in between would refuse
    # the call and let the run finalize; once the tool itself runs, nothing checks until 600 s
    run.wait_for_file(mark)
    run.proc.send_signal(signal.SIGINT)
    run.wait_for(CANCELLING)
    run.proc.send_signal(signal.SIGINT)
    code, stdout, stderr = run.finish()
    assert code == 130, stderr
    assert "quit; continue with: noema-graph resume c2 --db runs.sqlite" in stderr
    assert stdout == "" and "Traceback" not in stderr
    status, _ = thread_status(tmp_path / "runs.sqlite", "c2")
    assert status == "running"  # stopped mid-run: the checkpoint before the call is kept

    code, stdout, stderr = _resume(tmp_path, "after-slow", "c2")
    assert code == 0, stderr
    assert stdout == "the answer is 42\n"


def _forget_last(db: Path, thread: str, checkpoints: int, writes: int) -> None:
    """Remove ``thread``'s last checkpoints, and the writes of the steps after the last ones."""
    rows = history(db, thread)
    with sqlite3.connect(db) as conn:
        for row in rows[-checkpoints:]:
            conn.execute("DELETE FROM checkpoints WHERE checkpoint_id = ?", (row.checkpoint_id,))
        for row in rows[-writes:]:
            conn.execute("DELETE FROM writes WHERE checkpoint_id = ?", (row.checkpoint_id,))


LOST = {  # what the process had not saved when it ended: (checkpoints, steps' writes)
    "finalize-writes-saved": (1, 1),
    "finalize-not-run": (1, 2),
    "tool-writes-saved": (2, 2),
}


@pytest.mark.parametrize("lost", LOST)
def test_a_run_quit_while_it_was_being_cancelled_runs_its_cut_call_on_resume(
    tmp_path: Path, lost: str
) -> None:
    """A second Ctrl-C may end the process after the cancel saved some of its steps (the
    cut call's observation, finalize's cancelled output) but not the checkpoint that closes
    them: the end of a cancelled run is removed to stand for that. Resume does not keep
    what the cancel wrote (the run would end cancelled again, or answer without the call):
    it continues before the step the cancel cut short, and the call runs to its end."""
    run = Cli(tmp_path, "slow", "run", "Ask slow", "--db", "runs.sqlite", "--thread", "c4",
              NOEMA_TEST_SLEEP="600")  # fmt: skip
    run.wait_for("tool slow({})")
    run.proc.send_signal(signal.SIGINT)
    assert run.finish()[0] == 130
    _forget_last(tmp_path / "runs.sqlite", "c4", *LOST[lost])
    assert thread_status(tmp_path / "runs.sqlite", "c4")[0] == "running"

    code, stdout, stderr = _resume(tmp_path, "after-slow", "c4")
    assert code == 0, stderr
    assert stdout == "the answer is 42\n" and "-> ok" in stderr  # the cut call ran, to its end
    status, output = thread_status(tmp_path / "runs.sqlite", "c4")
    assert status == "finished" and output["success"]
    steps = output["reasoning"]["steps"]
    assert [s["observation"] for s in steps if s["kind"] == "tool"] == ["42"]


def test_json_mode_of_a_cancelled_run(tmp_path: Path) -> None:
    mark = tmp_path / "started"
    run = Cli(tmp_path, "slow", "run", "Ask slow", "--db", "runs.sqlite", "--thread", "c3",
              "--json", NOEMA_TEST_SLEEP="600", NOEMA_TEST_MARK=str(mark))  # fmt: skip
    run.wait_for_file(mark)  # --json prints no progress: the tool says it started
    run.proc.send_signal(signal.SIGINT)
    code, stdout, stderr = run.finish()
    assert code == 130, stderr
    assert json.loads(stdout)["error"]["code"] == "cancelled"  # stdout: the JSON only
    assert (
        stderr.splitlines()[-1]
        == "cancelled; continue with: noema-graph resume c3 --db runs.sqlite"
    )
