"""Run a child process with a timeout, a whole-group kill and a bounded output buffer."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from noema_graph.tools.results import ToolFailure


@dataclass(frozen=True)
class ProcessOutcome:
    """What a confined child process did.

    Attributes:
        exit_code: Exit status (negative: killed by that signal); None when timed out.
        output: Combined stdout and stderr, at most ``max_output_bytes`` of it, decoded.
        output_bytes: Bytes the process wrote in all.
        truncated: Whether output was cut.
        timed_out: Whether the process group was killed for running too long.
    """

    exit_code: int | None
    output: str
    output_bytes: int
    truncated: bool
    timed_out: bool


def outcome_data(outcome: ProcessOutcome, *, what: str, limit: float) -> dict[str, object]:
    """Return a finished process's result as tool data; a timeout raises ToolFailure."""
    if outcome.timed_out:
        raise ToolFailure(
            f"timeout: {what} killed after {limit:g}s",
            type_="timeout",
            details={"output": outcome.output[-2000:]},
        )
    return {
        "exit_code": outcome.exit_code,
        "output": outcome.output,
        "output_bytes": outcome.output_bytes,
        "truncated": outcome.truncated,
    }


class _CappedReader(threading.Thread):
    """Drain a pipe, keeping the first ``cap`` bytes and counting the rest."""

    def __init__(self, pipe: IO[bytes], cap: int) -> None:
        super().__init__(daemon=True, name="noema-output-reader")
        self._pipe = pipe
        self._cap = cap
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        while chunk := self._pipe.read1(65536):  # pyright: ignore[reportAttributeAccessIssue] -- BufferedReader
            self.total += len(chunk)
            room = self._cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]


def run_confined(
    argv: list[str],
    *,
    cwd: Path,
    timeout_s: float,
    max_output_bytes: int,
    env: dict[str, str],
    stdin_data: bytes | None = None,
) -> ProcessOutcome:
    """Run ``argv`` in its own session; on timeout kill the whole process group.

    Output beyond ``max_output_bytes`` is read and dropped, so a flood cannot exhaust memory
    and the child never blocks on a full pipe.
    """
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    reader = _CappedReader(process.stdout, max_output_bytes)
    reader.start()
    if stdin_data is not None and process.stdin is not None:
        try:
            process.stdin.write(stdin_data)
            process.stdin.close()
        except BrokenPipeError:
            pass
    timed_out = False
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        _kill_group(process.pid)
        process.wait()
    reader.join(timeout=5)
    process.stdout.close()
    return ProcessOutcome(
        exit_code=None if timed_out else process.returncode,
        output=bytes(reader.kept).decode("utf-8", errors="replace"),
        output_bytes=reader.total,
        truncated=reader.total > len(reader.kept),
        timed_out=timed_out,
    )


def _kill_group(pgid: int) -> None:
    """Kill every process left in the group (children that outlived the leader too)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:
        pass
