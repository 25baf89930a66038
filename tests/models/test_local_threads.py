"""The embedded server's thread count, and its start from async code off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from noema_graph.errors import ConfigurationError
from noema_graph.models import local
from noema_graph.models.local import (
    MAX_DEFAULT_THREADS,
    THREADS_ENV,
    LocalModelServer,
    choose_threads,
    default_threads,
    local_threads,
    shared_local_server,
)


def _affinity(*cpus: int) -> Callable[[int], set[int]]:
    """Return a stand-in of ``os.sched_getaffinity`` that reports ``cpus``."""
    return lambda pid: set(cpus)


@pytest.mark.parametrize(
    ("cpus", "load", "threads"),
    [
        (2, 0.0, 2),  # idle: every CPU
        (2, 0.49, 2),
        (2, 0.5, 1),  # anything else running: one CPU left to it
        (2, 6.3, 1),
        (2, None, 1),  # no load average: counted busy
        (1, 0.0, 1),
        (1, 3.0, 1),  # never below 1
        (6, 0.1, 6),
        (6, 2.0, 5),
        (64, 0.0, MAX_DEFAULT_THREADS),
        (64, 9.0, MAX_DEFAULT_THREADS),
    ],
)
def test_choose_threads_all_cpus_when_idle_else_one_left(
    cpus: int, load: float | None, threads: int
) -> None:
    assert choose_threads(cpus, load) == threads


@pytest.mark.parametrize(("cpus", "threads"), [(1, 1), (2, 1), (6, 5), (64, MAX_DEFAULT_THREADS)])
def test_default_on_a_busy_machine_is_the_available_cpus_less_one_capped(
    monkeypatch: pytest.MonkeyPatch, cpus: int, threads: int
) -> None:
    monkeypatch.setattr(local.os, "sched_getaffinity", _affinity(*range(cpus)))
    monkeypatch.setattr(local.os, "getloadavg", lambda: (3.0, 2.0, 1.0))
    assert default_threads() == threads
    assert local_threads({}) == threads
    assert local_threads({THREADS_ENV: "  "}) == threads  # blank means unset
    assert LocalModelServer().n_threads == threads


def test_default_on_an_idle_machine_is_every_available_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(local.os, "sched_getaffinity", _affinity(0, 1))
    monkeypatch.setattr(local.os, "getloadavg", lambda: (0.1, 0.3, 0.2))
    assert default_threads() == 2
    assert local_threads({THREADS_ENV: "1"}) == 1  # the override still wins


def test_no_load_average_counts_as_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(local.os, "sched_getaffinity", _affinity(0, 1, 2, 3))
    monkeypatch.setattr(local.os, "getloadavg", unavailable)
    assert default_threads() == 3


def test_the_thread_count_is_not_part_of_a_saved_prefix_key() -> None:
    xllamacpp = pytest.importorskip("xllamacpp")
    one, two = xllamacpp.CommonParams(), xllamacpp.CommonParams()
    one.cpuparams.n_threads = one.cpuparams_batch.n_threads = 1
    two.cpuparams.n_threads = two.cpuparams_batch.n_threads = 2
    assert local._kv_settings(one) == local._kv_settings(two)  # pyright: ignore[reportPrivateUsage] -- the key's fields
    two.n_batch = one.n_batch * 2
    assert local._kv_settings(one) != local._kv_settings(two)  # pyright: ignore[reportPrivateUsage]


def test_the_affinity_mask_wins_over_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(local.os, "sched_getaffinity", _affinity(0, 1, 2))
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
