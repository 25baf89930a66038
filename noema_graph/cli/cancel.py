"""Ctrl-C in the CLI: once cancels the run gracefully, twice leaves at once.

The first SIGINT sets the run's abort switch (``RunContext.abort``): the call in progress
is interrupted, the run ends in ``finalize`` with ``error.code = "cancelled"`` and its
checkpoints stay, so ``noema-graph resume THREAD`` continues it. A second SIGINT exits the
process immediately with status 130; the last completed step is checkpointed, so resume
works from there too. The embedded model server lives inside the process and ends with it.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn

logger = logging.getLogger(__name__)

WATCHER_JOIN_S = 5.0
"""How long leaving the block waits for the watcher to act on a last press and stop."""


def hard_exit(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process now, without waiting for worker threads.

    A tool or model call abandoned by a cancel keeps its worker thread busy until it returns;
    a normal interpreter exit would wait for it.
    """
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe or stream: nothing to flush
            stream.flush()
    os._exit(code)


class _Presses:
    """Counts Ctrl-C presses: the first cancels, the second leaves at once."""

    def __init__(
        self,
        abort: threading.Event,
        on_cancel: Callable[[], None],
        on_exit: Callable[[], None],
        exit_code: int,
    ) -> None:
        self._abort, self._on_cancel, self._on_exit = abort, on_cancel, on_exit
        self._exit_code = exit_code

    def press(self) -> None:
        if self._abort.is_set():
            self._on_exit()
            hard_exit(self._exit_code)
        else:
            self._abort.set()
            self._on_cancel()

    def watch(self, read: int) -> None:
        """Act on each SIGINT byte the signal machinery writes to ``read``, until it closes.

        A callback that fails is logged, not fatal: the abort switch is set before
        ``on_cancel`` runs, and the next press must still be able to quit.
        """
        try:
            while chunk := os.read(read, 64):
                for _ in range(chunk.count(int(signal.SIGINT))):
                    try:
                        self.press()
                    except Exception:
                        logger.exception("Ctrl-C: a callback failed; the press still counts")
        finally:
            os.close(read)


@contextmanager
def ctrl_c_cancels(
    abort: threading.Event,
    *,
    on_cancel: Callable[[], None],
    on_exit: Callable[[], None],
    exit_code: int = 130,
) -> Generator[threading.Event]:
    """Within the block, the first SIGINT sets ``abort`` and calls ``on_cancel``.

    The second calls ``on_exit`` and ends the process with ``exit_code`` at once. Outside
    the main thread (where signals cannot be handled) the block runs unchanged. The previous
    handler is restored on exit.

    The presses are acted on by a watcher thread that reads the signal wakeup fd, not by a
    Python-level handler: the kernel may deliver SIGINT to any thread, and a Python handler
    only runs once the main thread wakes up, which, while it waits for a graph step
    without a timeout, is when the step ends (a cancel would wait for the whole tool call).
    Within the block the wakeup fd is this one's: another signal with a Python handler
    still runs that handler, but a wakeup fd set before (an asyncio loop's) is not written.
    """
    if threading.current_thread() is not threading.main_thread():
        yield abort
        return

    presses = _Presses(abort, on_cancel, on_exit, exit_code)
    read, write = os.pipe()
    watcher = threading.Thread(target=presses.watch, args=(read,), name="noema-ctrl-c", daemon=True)
    watcher.start()  # it owns ``read`` and closes it once ``write`` is closed
    try:
        os.set_blocking(write, False)
        previous = signal.signal(signal.SIGINT, _ignore)  # the C handler still writes the fd
        try:
            previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
            try:
                yield abort
            finally:
                signal.set_wakeup_fd(previous_fd)
        finally:
            signal.signal(signal.SIGINT, previous)  # a press in between is dropped, not doubled
    finally:
        os.close(write)  # the watcher reads the end of the pipe and stops
        watcher.join(timeout=WATCHER_JOIN_S)


def _ignore(signum: int, frame: FrameType | None) -> None:
    """The Python-level SIGINT handler: the watcher thread acts on the press instead."""
