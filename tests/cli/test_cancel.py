"""``ctrl_c_cancels`` in this process: the presses are counted wherever the kernel delivers them.

``tests/cli/test_ctrl_c.py`` drives the real CLI in a subprocess; these cases pin what a
subprocess cannot aim: a SIGINT that lands on a worker thread while the main thread waits.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from noema_graph.cli import cancel
from noema_graph.cli.cancel import ctrl_c_cancels

GUARD_S = 30.0  # only stops a broken case from hanging; nothing asserts a duration


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_a_ctrl_c_landing_on_a_worker_thread_cancels_while_the_main_thread_waits() -> None:
    abort, notes = threading.Event(), list[str]()
    with ctrl_c_cancels(abort, on_cancel=lambda: notes.append("cancel"), on_exit=lambda: None):

        def worker() -> None:
            time.sleep(0.5)  # let the main thread settle into its wait first
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
            abort.wait(GUARD_S)  # stay alive: a thread's end could wake the main thread

        thread = threading.Thread(target=worker)
        thread.start()
        # The main thread sleeps in a wait of its own, as it does while a graph step runs:
        # a Python-level handler would only run once this wait ended on its own.
        assert abort.wait(GUARD_S)
        thread.join()
    assert notes == ["cancel"]


def test_a_second_ctrl_c_calls_on_exit_and_ends_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exits: list[int] = []
    left = threading.Event()

    def fake_exit(code: int) -> None:
        exits.append(code)
        left.set()

    monkeypatch.setattr(cancel, "hard_exit", fake_exit)
    abort, notes = threading.Event(), list[str]()
    with ctrl_c_cancels(
        abort,
        on_cancel=lambda: notes.append("cancel"),
        on_exit=lambda: notes.append("exit"),
        exit_code=7,
    ):
        signal.raise_signal(signal.SIGINT)
        assert abort.wait(GUARD_S)
        signal.raise_signal(signal.SIGINT)
        assert left.wait(GUARD_S)
    assert (notes, exits) == (["cancel", "exit"], [7])


def test_a_failing_cancel_callback_is_logged_and_the_next_press_still_quits(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    left = threading.Event()
    monkeypatch.setattr(cancel, "hard_exit", lambda code: left.set())  # pyright: ignore[reportUnknownLambdaType]
    abort = threading.Event()

    def broken() -> None:
        raise RuntimeError("the view is gone")

    with ctrl_c_cancels(abort, on_cancel=broken, on_exit=lambda: None):
        signal.raise_signal(signal.SIGINT)
        assert abort.wait(GUARD_S)  # set before the callback ran
        signal.raise_signal(signal.SIGINT)
        assert left.wait(GUARD_S)
    assert "a callback failed" in caplog.text and "the view is gone" in caplog.text


def test_leaving_the_block_restores_the_handler_and_closes_the_pipe() -> None:
    before_fds, before_handler = _open_fds(), signal.getsignal(signal.SIGINT)
    with ctrl_c_cancels(threading.Event(), on_cancel=lambda: None, on_exit=lambda: None):
        assert signal.getsignal(signal.SIGINT) is not before_handler
        assert any(t.name == "noema-ctrl-c" for t in threading.enumerate())
    assert signal.getsignal(signal.SIGINT) is before_handler
    assert signal.set_wakeup_fd(-1) == -1  # no wakeup fd is left behind
    assert not any(t.name == "noema-ctrl-c" for t in threading.enumerate())
    assert _open_fds() == before_fds
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C outside the block is Python's again
        signal.raise_signal(signal.SIGINT)


def test_outside_the_main_thread_the_block_runs_unchanged() -> None:
    seen: list[object] = []

    def body() -> None:
        with ctrl_c_cancels(threading.Event(), on_cancel=lambda: None, on_exit=lambda: None):
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [signal.default_int_handler]
