"""Ctrl-C in the CLI: once cancels the run gracefully, twice leaves at once.

The first SIGINT sets the run's abort switch (``RunContext.abort``): the call in progress
is interrupted, the run ends in ``finalize`` with ``error.code = "cancelled"`` and its
checkpoints stay, so ``noema-graph resume THREAD`` continues it. A second SIGINT exits the
process immediately with status 130; the last completed step is checkpointed, so resume
works from there too. The embedded model server lives inside the process and ends with it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn


def hard_exit(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process now, without waiting for worker threads.

    A tool or model call abandoned by a cancel keeps its worker thread busy until it returns;
    a normal interpreter exit would wait for it.
    """
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe or stream: nothing to flush
            stream.flush()
    os._exit(code)


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
    """
    if threading.current_thread() is not threading.main_thread():
        yield abort
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        if abort.is_set():
            on_exit()
            hard_exit(exit_code)
        abort.set()
        on_cancel()

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield abort
    finally:
        signal.signal(signal.SIGINT, previous)
