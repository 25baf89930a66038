"""The embedded server's thread count, and its start from async code off the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.models import local
from noema_graph.models.local import (
    MAX_DEFAULT_THREADS,
    THREADS_ENV,
    LocalModelServer,
    default_threads,
    local_threads,
    shared_local_server,
)


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (6, 5), (64, MAX_DEFAULT_THREADS)])
def test_default_is_the_available_cpus_less_one_capped(
    monkeypatch: pytest.MonkeyPatch, cpus: int, threads: int
) -> None:
    monkeypatch.setattr(local.os, "sched_getaffinity", lambda pid: set(range(cpus)))
    assert default_threads() == threads
    assert local_threads({}) == threads
    assert local_threads({THREADS_ENV: "  "}) == threads  # blank means unset
    assert LocalModelServer().n_threads == threads


def test_the_affinity_mask_wins_over_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(local.os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert local.available_cpus() == 3


def test_the_environment_sets_the_count() -> None:
    assert local_threads({THREADS_ENV: "3"}) == 3
    assert local_threads({THREADS_ENV: " 12 "}) == 12  # above the default's cap: asked for


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_an_invalid_count_names_the_variable_and_the_value(value: str) -> None:
    with pytest.raises(ConfigurationError, match=rf"{THREADS_ENV}: .*{value!r}") as caught:
        local_threads({THREADS_ENV: value})
    assert caught.value.fix is not None and THREADS_ENV in caught.value.fix


def test_an_invalid_n_threads_argument_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="n_threads"):
        LocalModelServer(n_threads=0)


def test_the_shared_server_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_shared", {})  # fresh process-wide servers, not started
    monkeypatch.setenv(THREADS_ENV, "3")
    assert shared_local_server().n_threads == 3
    monkeypatch.setattr(local, "_shared", {})
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(ConfigurationError, match=THREADS_ENV):
        shared_local_server()


class _RecordingServer(LocalModelServer):
    """Records the thread that loads the model instead of loading one."""

    loaded_in: threading.Thread | None = None

    def _start_locked(self) -> None:
        self.loaded_in = threading.current_thread()
        self._server, self._base_url = object(), "http://127.0.0.1:1"


def test_astart_loads_in_a_worker_thread_once() -> None:
    server = _RecordingServer()

    async def start_twice() -> tuple[str, str, threading.Thread]:
        first = await server.astart()
        return first, await server.astart(), threading.current_thread()

    first, second, loop_thread = asyncio.run(start_twice())
    assert first == second == "http://127.0.0.1:1/v1"
    assert server.loaded_in is not None and server.loaded_in is not loop_thread
