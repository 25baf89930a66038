"""Saved prompt prefixes of the embedded model: each agent's stable prefix processed once.

Nearly all of a run on the embedded model is llama.cpp processing the prompt, and the
server's own caches (the slot's tokens, ``cache_ram_mib`` in host memory) live only as long
as its process. So the KV state of what every run of an agent sends first (its
instructions up to the worked examples) is saved to a file with llama.cpp's slot save
(``POST /slots/0?action=save``, into the server's ``slot_save_path``) and restored into the
slot when a later process first calls the model for that agent
(``?action=restore``); the request's own prompt then shares that prefix, and llama.cpp's
``cache_prompt`` processes only the rest.

A file is keyed (:func:`cache_key`) by the prefix's text, the model file, the llama.cpp
build and the server settings that shape the KV state (window, batch sizes, KV types,
flash attention), never by a request. Next to it a JSON record holds the key's fields, the
file's size and its SHA-256; a file whose record is missing, differs, or does not match its
bytes (stale, damaged, truncated, another model's) is never restored: the run goes on cold
with one warning line and the file is rebuilt where the folder allows. A cache folder that
cannot be written (read-only, full) costs nothing but that warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from noema_graph.errors import NoemaError

logger = logging.getLogger(__name__)

FORMAT = 1
"""Version of the record's layout; a record of another version is stale."""
SUFFIX = ".slot"
RECORD_SUFFIX = ".json"
_CHUNK = 1 << 20


class PrefixCacheError(NoemaError):
    """A slot save or restore the server refused; the caller goes on cold.

    A control-flow signal: the cache catches it, logs one warning and runs cold.
    """


class SlotClient(Protocol):
    """The three server calls the cache makes (the embedded server's HTTP endpoints)."""

    def process(self, prefix: str) -> int:
        """Process ``prefix`` as the start of a system message; return its prompt tokens."""
        ...

    def save(self, filename: str) -> int:
        """Save the slot's KV state to ``filename`` in the save folder; return bytes written."""
        ...

    def restore(self, filename: str) -> int:
        """Load ``filename`` from the save folder into the slot; return the tokens restored."""
        ...


def file_fingerprint(path: Path) -> str:
    """Return a fingerprint of a model file: name, size, and the SHA-256 of its ends.

    Hashing the whole file would cost a fraction of a second in every process; a
    different file (another quantisation, another model) differs in its header, its size
    or its last tensor.
    """
    size = path.stat().st_size
    digest = hashlib.sha256(f"{path.name}:{size}".encode())
    with path.open("rb") as handle:
        digest.update(handle.read(_CHUNK))
        if size > 2 * _CHUNK:
            handle.seek(size - _CHUNK)
            digest.update(handle.read(_CHUNK))
    return digest.hexdigest()


def cache_key(
    prefix: str, model: str, build: str, settings: Mapping[str, object]
) -> dict[str, object]:
    """Return the fields a saved prefix is keyed by (a request is never one of them)."""
    return {
        "format": FORMAT,
        "prefix_sha256": hashlib.sha256(prefix.encode()).hexdigest(),
        "model": model,
        "build": build,
        "settings": dict(sorted(settings.items())),
    }


def key_name(key: Mapping[str, object]) -> str:
    """Return the file stem of ``key``: the SHA-256 of its canonical JSON, shortened."""
    text = json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class PrefixCache:
    """Saved stable prefixes of one server (its model file, build and settings).

    Args:
        folder: The server's ``slot_save_path``.
        client: The server's slot endpoints.
        model: :func:`file_fingerprint` of the served file.
        build: The llama.cpp build (xllamacpp's version and build info).
        settings: Server settings that shape the KV state.
    """

    folder: Path
    client: SlotClient
    model: str
    build: str
    settings: Mapping[str, object]

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._current: str | None = None
        self._warned: set[str] = set()
        self.restored = 0
        self.built = 0

    def key(self, prefix: str) -> dict[str, object]:
        """Return the key of ``prefix`` on this server."""
        return cache_key(prefix, self.model, self.build, self.settings)

    def paths(self, prefix: str) -> tuple[Path, Path]:
        """Return (state file, record) of ``prefix``."""
        stem = key_name(self.key(prefix))
        return self.folder / f"{stem}{SUFFIX}", self.folder / f"{stem}{RECORD_SUFFIX}"

    def ensure(self, prefix: str) -> str:
        """Put ``prefix``'s KV state in the slot: restored from its file, else built and saved.

        Returns what happened: ``"current"`` (the slot was last given this prefix in this
        process), ``"restored"``, ``"built"`` (processed, and saved when the folder allows)
        or ``"cold"`` (the server refused; the request processes the prefix itself).
        Never raises for a cache problem: it logs one warning line and goes on.
        """
        if not prefix.strip():
            return "cold"
        with self._lock:
            if self._current == prefix:
                return "current"
            self._current = None
            outcome = self._restore(prefix) or self._build(prefix)
            if outcome != "cold":
                self._current = prefix
            return outcome

    def forget(self) -> None:
        """Forget which prefix the slot holds (another caller used the slot)."""
        with self._lock:
            self._current = None

    def _restore(self, prefix: str) -> str | None:
        state, record = self.paths(prefix)
        if not state.exists() and not record.exists():
            return None
        problem = self._check(prefix, state, record)
        if problem is None:
            try:
                self.client.restore(state.name)
            except PrefixCacheError as exc:
                problem = f"llama.cpp refused it ({exc})"
            else:
                self.restored += 1
                return "restored"
        self._warn(state, f"saved prompt prefix {state} not used: {problem}; rebuilding it")
        for path in (record, state):
            _remove(path)
        return None

    def _check(self, prefix: str, state: Path, record: Path) -> str | None:
        """Return why the saved file must not be restored, or None when it may."""
        try:
            saved: object = json.loads(record.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return "its record is missing"
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return f"its record is unreadable ({type(exc).__name__})"
        fields: dict[str, object] = saved if isinstance(saved, dict) else {}
        expected = self.key(prefix)
        differing = sorted(k for k in expected if fields.get(k) != expected[k])
        if differing:
            return f"saved for another {', '.join(differing)}"
        return _damage(state, fields)

    def _build(self, prefix: str) -> str:
        state, record = self.paths(prefix)
        try:
            tokens = self.client.process(prefix)
        except PrefixCacheError as exc:
            self._warn(state, f"prompt prefix not processed ({exc}); the run goes on cold")
            return "cold"
        self.built += 1
        partial = state.with_name(f"{state.stem}.{os.getpid()}.part")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            written = self.client.save(partial.name)
            size = partial.stat().st_size
            if size != written:
                raise PrefixCacheError(f"{size} of {written} bytes on disk")
            data = {
                **self.key(prefix),
                "tokens": tokens,
                "bytes": size,
                "sha256": _sha256_of(partial),
            }
            os.replace(partial, state)
            temporary = record.with_name(f"{record.stem}.{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(temporary, record)
        except (OSError, PrefixCacheError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self._warn(state, f"prompt prefix not saved in {self.folder} ({why}); next run cold")
            for path in (partial, state, record):
                _remove(path)
        return "built"

    def _warn(self, state: Path, message: str) -> None:
        if state.name not in self._warned:
            self._warned.add(state.name)
            logger.warning("%s", message)


def _damage(state: Path, record: Mapping[str, object]) -> str | None:
    """Return how the state file differs from its record (size, SHA-256), or None."""
    try:
        size = state.stat().st_size
        if size != record.get("bytes"):
            return f"{size} bytes where {record.get('bytes')} were saved (truncated?)"
        if _sha256_of(state) != record.get("sha256"):
            return "its bytes differ from those saved (damaged)"
    except OSError as exc:
        return f"unreadable ({exc.strerror or type(exc).__name__})"
    return None


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only folder: the checks refuse it next time too
        path.unlink(missing_ok=True)
