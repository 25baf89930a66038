"""The saved prompt prefixes: their keys, and every damaged or unwritable path (no timing)."""

from __future__ import annotations

import json
import logging
import stat
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from noema_graph.models.local import LocalModelServer, prompt_cache_folder
from noema_graph.models.prefix_cache import (
    PrefixCache,
    PrefixCacheError,
    cache_key,
    file_fingerprint,
    key_name,
)

PREFIX = "You are an agent. Call the tool once."
SETTINGS = {"n_ctx": 8192, "n_batch": 2048, "cache_type_k": "f16"}


class Slots:
    """A slot client that writes the processed prefix as the 'KV state' (strict: records calls)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.slot = ""
        self.calls: list[str] = []
        self.refuse_restore = False

    def process(self, prefix: str) -> int:
        self.calls.append("process")
        self.slot = prefix
        return len(prefix.split())

    def save(self, filename: str) -> int:
        self.calls.append("save")
        data = f"KV:{self.slot}".encode()
        (self.folder / filename).write_bytes(data)
        return len(data)

    def restore(self, filename: str) -> int:
        self.calls.append("restore")
        if self.refuse_restore:
            raise PrefixCacheError("HTTP 400: invalid slot save file")
        data = (self.folder / filename).read_bytes().decode()
        self.slot = data.removeprefix("KV:")
        return len(self.slot.split())


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "prompts"
    yield path
    if path.exists():
        path.chmod(stat.S_IRWXU)


def cache(folder: Path, slots: Slots, **changes: object) -> PrefixCache:
    fields: dict[str, object] = {"model": "m1", "build": "b1", "settings": SETTINGS}
    fields.update(changes)
    return PrefixCache(folder, slots, **fields)  # type: ignore[arg-type] -- test fields


def test_a_prefix_is_built_once_then_restored_in_a_new_process(folder: Path) -> None:
    first = Slots(folder)
    assert cache(folder, first).ensure(PREFIX) == "built"
    assert first.calls == ["process", "save"]
    state, record = cache(folder, first).paths(PREFIX)
    assert state.is_file() and record.is_file()
    assert not list(folder.glob("*.part")) and not list(folder.glob("*.tmp"))

    later = Slots(folder)  # a new process: a new server and a new cache object
    again = cache(folder, later)
    assert again.ensure(PREFIX) == "restored"
    assert later.slot == PREFIX and later.calls == ["restore"]
    assert again.ensure(PREFIX) == "current"  # the slot already holds it
    assert later.calls == ["restore"]


def test_the_key_is_the_prefix_model_build_and_settings_never_the_request() -> None:
    base = cache_key(PREFIX, "m1", "b1", SETTINGS)
    assert set(base) == {"format", "prefix_sha256", "model", "build", "settings"}
    assert PREFIX not in json.dumps(base)  # the text is hashed, not stored
    names = {
        key_name(base),
        key_name(cache_key(PREFIX + " ", "m1", "b1", SETTINGS)),
        key_name(cache_key(PREFIX, "m2", "b1", SETTINGS)),
        key_name(cache_key(PREFIX, "m1", "b2", SETTINGS)),
        key_name(cache_key(PREFIX, "m1", "b1", {**SETTINGS, "cache_type_k": "q8_0"})),
    }
    assert len(names) == 5
    reordered = dict(reversed(list(SETTINGS.items())))
    assert key_name(cache_key(PREFIX, "m1", "b1", reordered)) == key_name(base)


def test_model_fingerprint_tells_files_apart(tmp_path: Path) -> None:
    one, two = tmp_path / "a.gguf", tmp_path / "b.gguf"
    one.write_bytes(b"GGUF" + b"x" * 5000)
    two.write_bytes(b"GGUF" + b"y" * 5000)
    assert file_fingerprint(one) != file_fingerprint(two)
    assert file_fingerprint(one) == file_fingerprint(one)


@pytest.mark.parametrize(
    "damage",
    ["truncated", "flipped", "no_record", "bad_record", "other_model", "other_build"],
)
def test_a_damaged_or_foreign_file_is_never_restored_but_rebuilt(
    folder: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    cache(folder, Slots(folder)).ensure(PREFIX)
    state, record = cache(folder, Slots(folder)).paths(PREFIX)
    data = state.read_bytes()
    saved = json.loads(record.read_text())
    if damage == "truncated":
        state.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":
        state.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    elif damage == "no_record":
        record.unlink()
    elif damage == "bad_record":
        record.write_text("{not json")
    else:
        field = "model" if damage == "other_model" else "build"
        record.write_text(json.dumps({**saved, field: "another"}))

    later = Slots(folder)
    with caplog.at_level(logging.WARNING, logger="noema_graph.models.prefix_cache"):
        assert cache(folder, later).ensure(PREFIX) == "built"
    assert later.calls == ["process", "save"]  # never restored
    assert len(caplog.records) == 1 and "not used" in caplog.records[0].getMessage()
    assert (
        state.read_bytes() == data and json.loads(record.read_text())["sha256"] == saved["sha256"]
    )


def test_a_file_llama_cpp_refuses_is_rebuilt(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache(folder, Slots(folder)).ensure(PREFIX)
    later = Slots(folder)
    later.refuse_restore = True
    with caplog.at_level(logging.WARNING):
        assert cache(folder, later).ensure(PREFIX) == "built"
    assert later.calls == ["restore", "process", "save"]
    assert "refused" in caplog.text


class ReadOnly(Slots):
    """A folder llama.cpp cannot write to: its save endpoint answers with an error."""

    def save(self, filename: str) -> int:
        self.calls.append("save")
        raise PrefixCacheError("HTTP 500: failed to open file for writing")


def test_a_read_only_folder_goes_on_cold_with_one_warning(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    slots = ReadOnly(folder)
    prefixes = cache(folder, slots)
    with caplog.at_level(logging.WARNING):
        assert prefixes.ensure(PREFIX) == "built"
        prefixes.forget()
        assert prefixes.ensure(PREFIX) == "built"
    assert slots.calls == ["process", "save", "process", "save"]
    assert len(caplog.records) == 1 and "not saved" in caplog.text
    assert not list(folder.iterdir())


class FullDisk(Slots):
    """A save that leaves fewer bytes on disk than the server says it wrote."""

    def save(self, filename: str) -> int:
        written = super().save(filename)
        path = self.folder / filename
        path.write_bytes(path.read_bytes()[:3])
        return written


def test_a_short_write_leaves_no_file_behind(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert cache(folder, FullDisk(folder)).ensure(PREFIX) == "built"
    assert "not saved" in caplog.text
    assert not list(folder.iterdir())
    assert cache(folder, Slots(folder)).ensure(PREFIX) == "built"  # no damaged file to restore


def test_an_unwritable_path_costs_a_warning_not_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    slots = Slots(tmp_path)
    with caplog.at_level(logging.WARNING):
        assert cache(blocker / "prompts", slots).ensure(PREFIX) == "built"
    assert len(caplog.records) == 1


class Down(Slots):
    def process(self, prefix: str) -> int:
        raise PrefixCacheError("HTTP 503: loading model")


def test_a_server_that_refuses_the_prefix_leaves_the_run_cold(folder: Path) -> None:
    prefixes = cache(folder, Down(folder))
    assert prefixes.ensure(PREFIX) == "cold"
    assert prefixes.ensure("   ") == "cold"


def test_the_folder_comes_from_the_environment(tmp_path: Path) -> None:
    assert prompt_cache_folder({"NOEMA_PROMPT_CACHE": str(tmp_path)}) == tmp_path
    assert prompt_cache_folder({"NOEMA_PROMPT_CACHE": "off"}) is None
    default = prompt_cache_folder({"XDG_CACHE_HOME": str(tmp_path)})
    assert default == tmp_path / "noema_graph" / "prompts"


def _cached_tokens(server: LocalModelServer, system: str) -> int:
    body = {"messages": [{"role": "system", "content": system}], "max_tokens": 1}
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=120) as response:
        usage = json.loads(response.read())["usage"]
    return int(usage["prompt_tokens_details"]["cached_tokens"])


@pytest.mark.llm
def test_the_embedded_server_restores_a_saved_prefix_and_rejects_a_truncated_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = "You are a careful agent. " + " ".join(f"Rule {i}: be exact." for i in range(20))
    first = LocalModelServer(n_threads=1, cache_folder=tmp_path)
    first.start()
    try:
        assert first.prefix_cache is not None and first.prefix_cache.ensure(prefix) == "built"
    finally:
        first.stop()
    (state,) = tmp_path.glob("*.slot")
    saved = json.loads(state.with_suffix(".json").read_text())
    assert saved["tokens"] > 50

    second = LocalModelServer(n_threads=1, cache_folder=tmp_path)
    second.start()
    try:
        assert second.prefix_cache is not None and second.prefix_cache.ensure(prefix) == "restored"
        assert _cached_tokens(second, f"{prefix}\n\nRequest: something new") >= saved["tokens"] - 8
    finally:
        second.stop()

    state.write_bytes(state.read_bytes()[:1000])
    third = LocalModelServer(n_threads=1, cache_folder=tmp_path)
    third.start()
    try:
        with caplog.at_level(logging.WARNING):
            assert third.prefix_cache is not None and third.prefix_cache.ensure(prefix) == "built"
        assert "truncated" in caplog.text
        assert json.loads(state.with_suffix(".json").read_text())["bytes"] == state.stat().st_size
    finally:
        third.stop()
