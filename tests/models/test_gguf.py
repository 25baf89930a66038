"""``local:PATH.gguf``: GGUF metadata, one server per file, the profile's ``plans`` and bad paths.

The second GGUF is a copy of the bundled SmolLM2 file under another name, which proves the
path handling (a second server, named and sized from the copy's metadata) without a download.
"""

from __future__ import annotations

import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_openai import ChatOpenAI

from noema_graph.errors import ConfigurationError
from noema_graph.models import ModelSpec, make_model, model_profile, parse_model_spec
from noema_graph.models.factory import PLANS_ENV, plans_setting
from noema_graph.models.gguf import read_gguf_info
from noema_graph.models.local import (
    MAX_N_CTX,
    bundled_model_path,
    served_context,
    shared_local_server,
)
from noema_graph.models.profile import (
    PARAMETERS_KEY,
    PLANNING_PARAMETERS,
    PLANS_KEY,
    PROVIDER_KEY,
    model_plans,
)
from tests.cli.conftest import one_error_line


def _gguf(path: Path, pairs: list[tuple[str, int, bytes]], tensors: list[list[int]]) -> Path:
    """Write a minimal GGUF v3 file: key-value pairs and tensor infos, no weights."""

    def text(value: str) -> bytes:
        return struct.pack("<Q", len(value.encode())) + value.encode()

    body = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(pairs))
    for key, kind, value in pairs:
        body += text(key) + struct.pack("<I", kind) + value
    for index, dims in enumerate(tensors):
        body += text(f"t{index}") + struct.pack("<I", len(dims))
        body += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", 0, 0)
    path.write_bytes(body)
    return path


def _string(value: str) -> bytes:
    return struct.pack("<Q", len(value)) + value.encode()


def test_the_bundled_files_metadata() -> None:
    info = read_gguf_info(bundled_model_path())
    assert info.version in (2, 3)
    assert info.architecture == "llama"
    assert info.context_length == 8192
    assert 130e6 < info.parameters < 140e6  # SmolLM2-135M: no parameter_count key, summed
    assert info.size_label == "135M"
    assert info.name


def test_parameter_count_key_context_and_arrays_are_read(tmp_path: Path) -> None:
    path = _gguf(
        tmp_path / "big.gguf",
        [
            ("general.architecture", 8, _string("gemma3")),
            ("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 2) + _string("a") + _string("bc")),
            ("tokenizer.ggml.scores", 9, struct.pack("<IQ", 6, 3) + struct.pack("<3f", 1, 2, 3)),
            ("gemma3.context_length", 4, struct.pack("<I", 131072)),
            ("general.parameter_count", 10, struct.pack("<Q", 3_000_000_000)),
        ],
        [[4, 4]],
    )
    info = read_gguf_info(path)
    assert (info.architecture, info.context_length, info.parameters) == ("gemma3", 131072, 3e9)
    assert info.display_name == "big"  # no general.name: the stem
    assert served_context(info) == MAX_N_CTX == 8192


def test_without_a_parameter_count_the_tensors_are_counted(tmp_path: Path) -> None:
    path = _gguf(tmp_path / "small.gguf", [("general.name", 8, _string("Tiny"))], [[3, 4], [5]])
    info = read_gguf_info(path)
    assert (info.parameters, info.display_name, info.context_length) == (17, "Tiny", None)
    assert served_context(info) == 8192


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"PK\x03\x04 a zip file, not a model", "is not a GGUF file"),
        (b"", "is not a GGUF file"),
        (b"GGUF" + struct.pack("<I", 1), "version 1 .this reader knows 2 and 3"),
        (b"GGUF" + struct.pack("<IQQ", 3, 0, 5), "cannot read its metadata"),
        (
            b"GGUF"
            + struct.pack("<IQQ", 3, 0, 1)
            + _string("tokens")
            + struct.pack("<IIQ", 9, 8, 9),
            "cannot read its metadata",
        ),
    ],
)
def test_a_file_that_is_not_gguf_names_the_path(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError, match=says) as info:
        read_gguf_info(path)
    assert str(path) in str(info.value) and "local:" in str(info.value)


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist") as info:
        make_model(f"local:{tmp_path / 'absent.gguf'}", env={})
    assert str(tmp_path / "absent.gguf") in str(info.value)


def test_a_local_spec_parses_to_a_path(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    assert parse_model_spec(f"local:{path}", env={}) == ModelSpec("local", "m", path=path)
    with pytest.raises(ConfigurationError, match=r"local:/path/to/model\.gguf"):
        parse_model_spec(f"local:{tmp_path / 'notes.txt'}", env={})


@pytest.mark.parametrize(
    ("metadata", "is_local", "plans"),
    [
        ({}, False, True),
        ({PARAMETERS_KEY: 134_515_008}, True, False),
        ({PARAMETERS_KEY: PLANNING_PARAMETERS}, True, True),
        ({}, True, False),
        ({PARAMETERS_KEY: 134_515_008, PLANS_KEY: True}, True, True),
        ({PARAMETERS_KEY: 8_000_000_000, PLANS_KEY: False}, True, False),
        ({PLANS_KEY: False}, False, False),
    ],
)
def test_who_plans(metadata: dict[str, object], is_local: bool, plans: bool) -> None:
    assert model_plans(metadata, is_local=is_local) is plans


def test_an_explicit_choice_wins_for_a_remote_model() -> None:
    env = {"OPENAI_API_KEY": "sk-test"}
    assert model_profile(make_model("openai:gpt-4o", env=env)).plans
    assert not model_profile(make_model("openai:gpt-4o", env={**env, PLANS_ENV: "0"})).plans
    forced = make_model("openai:gpt-4o", plans=True, env={**env, PLANS_ENV: "0"})
    assert model_profile(forced).plans


@pytest.mark.parametrize(("text", "value"), [("1", True), ("0", False), (" ", None)])
def test_the_plans_variable(text: str, value: bool | None) -> None:
    assert plans_setting({PLANS_ENV: text}) is value


def test_a_bad_plans_variable_names_it() -> None:
    with pytest.raises(ConfigurationError, match=f"{PLANS_ENV}: must be 1 or 0, got 'maybe'"):
        plans_setting({PLANS_ENV: "maybe"})


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("local:/nowhere/model.gguf", "GGUF file '/nowhere/model.gguf' does not exist"),
        ("local:{junk}", "is not a GGUF file"),
        ("local:llama", "a local model is the embedded one or a GGUF file"),
    ],
)
def test_a_bad_local_path_is_one_line_and_exit_2(
    spec: str, says: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from noema_graph.cli.app import app

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "x", "--model", spec.format(junk=junk)])
    assert result.exit_code == 2
    line = one_error_line(result)
    assert says in line and "(fix: " in line


@pytest.fixture(scope="module")
def copied_gguf(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Return a copy of the bundled GGUF file under another name; stop its server after."""
    path = tmp_path_factory.mktemp("gguf") / "second-model.gguf"
    shutil.copyfile(bundled_model_path(), path)
    yield path
    shared_local_server(path).stop()


@pytest.mark.llm
def test_a_gguf_file_is_served_and_answers(
    copied_gguf: Path, local_model: BaseChatModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = make_model(f"local:{copied_gguf}", max_tokens=16, env={})
    assert isinstance(model, ChatOpenAI)
    server = shared_local_server(copied_gguf)
    assert server is not shared_local_server()  # one server per file
    assert server.base_url != shared_local_server().base_url
    assert model.openai_api_base == server.base_url
    info = read_gguf_info(copied_gguf)
    assert model.model_name == info.display_name
    profile = model_profile(model)
    assert (profile.provider, profile.protocol, profile.is_local) == ("local", "react", True)
    assert profile.context_window == server.n_ctx == 8192
    assert model.metadata is not None and model.metadata[PROVIDER_KEY] == "local"
    assert model.metadata[PARAMETERS_KEY] == info.parameters
    assert not profile.plans  # 135M parameters
    reply = model.invoke("What is the capital of France? Answer in one word.")
    assert reply.text and reply.response_metadata["model_name"] == info.display_name
    # the same file again: the same server, plans forced by the argument or the variable
    assert model_profile(make_model(f"local:{copied_gguf}", plans=True, env={})).plans
    monkeypatch.setenv(PLANS_ENV, "1")
    assert model_profile(make_model(f"local:{copied_gguf}")).plans
    monkeypatch.setenv("NOEMA_MODEL", f"local:{copied_gguf}")
    chosen = make_model()
    assert isinstance(chosen, ChatOpenAI) and chosen.openai_api_base == server.base_url


@pytest.mark.llm
def test_the_embedded_model_records_its_size_and_does_not_plan(local_model: BaseChatModel) -> None:
    assert local_model.metadata is not None
    assert 130e6 < local_model.metadata[PARAMETERS_KEY] < 140e6
    assert not model_profile(local_model).plans
