from __future__ import annotations

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from noema_graph.errors import ConfigurationError
from noema_graph.models import ModelSpec, make_model, model_profile, parse_model_spec
from noema_graph.models.factory import resolve_spec
from noema_graph.models.profile import DEFAULT_CONTEXT_WINDOW, context_window_for


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("local", ModelSpec("local", "smollm2-135m-instruct")),
        ("openai:gpt-4o", ModelSpec("openai", "gpt-4o")),
        (" openai:gpt-4o-mini ", ModelSpec("openai", "gpt-4o-mini")),
        (
            "openai-compatible:llama3@http://127.0.0.1:8080/v1",
            ModelSpec("openai-compatible", "llama3", "http://127.0.0.1:8080/v1"),
        ),
        (
            "openai-compatible:org/model@https://host.example/v1",
            ModelSpec("openai-compatible", "org/model", "https://host.example/v1"),
        ),
    ],
)
def test_parse_model_spec(spec: str, expected: ModelSpec) -> None:
    assert parse_model_spec(spec, env={}) == expected


def test_openai_compatible_takes_url_from_env() -> None:
    env = {"NOEMA_BASE_URL": "http://127.0.0.1:9/v1"}
    assert parse_model_spec("openai-compatible:qwen", env) == ModelSpec(
        "openai-compatible", "qwen", "http://127.0.0.1:9/v1"
    )


@pytest.mark.parametrize(
    ("spec", "fix"),
    [
        ("gpt-4o", "openai:<model>"),
        ("anthropic:claude", "openai-compatible:<model>@<base_url>"),
        ("openai:", "openai:gpt-4o-mini"),
        ("openai-compatible:qwen", "NOEMA_BASE_URL"),
        ("openai-compatible:qwen@localhost:8080", "@http(s)://"),
        ("local:llama", "'local'"),
    ],
)
def test_bad_spec_names_spec_and_fix(spec: str, fix: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_model_spec(spec, env={})
    assert repr(spec) in str(info.value)
    assert fix in str(info.value)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "local"),
        ({"OPENAI_API_KEY": "sk-x"}, "openai:gpt-4o-mini"),
        ({"NOEMA_BASE_URL": "http://127.0.0.1:1/v1"}, "openai-compatible:default"),
        ({"NOEMA_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "sk-x"}, "openai:gpt-4.1"),
        ({"OPENAI_API_KEY": " "}, "local"),
    ],
)
def test_resolve_spec_defaults(env: dict[str, str], expected: str) -> None:
    assert resolve_spec(None, env) == expected


def test_explicit_spec_wins_over_env() -> None:
    assert resolve_spec("local", {"OPENAI_API_KEY": "sk-x"}) == "local"


def test_openai_without_key_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY") as info:
        make_model("openai:gpt-4o", env={})
    assert info.value.field == "OPENAI_API_KEY"
    assert "local" in str(info.value)


def test_openai_model_and_profile() -> None:
    model = make_model("openai:gpt-4o", env={"OPENAI_API_KEY": "sk-test"})
    assert isinstance(model, ChatOpenAI)
    assert model.stream_usage is True
    profile = model_profile(model)
    assert (profile.provider, profile.model_name, profile.protocol) == (
        "openai",
        "gpt-4o",
        "native",
    )
    assert profile.context_window == 128_000
    assert profile.structured_output_method == "json_schema"
    assert not profile.is_local


def test_default_with_openai_key_is_gpt_4o_mini() -> None:
    model = make_model(env={"OPENAI_API_KEY": "sk-test"})
    assert model_profile(model).model_name == "gpt-4o-mini"


def test_openai_compatible_model_and_profile() -> None:
    env = {"NOEMA_API_KEY": "secret"}
    model = make_model("openai-compatible:qwen2.5@http://127.0.0.1:9/v1", env=env)
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "secret"
    profile = model_profile(model)
    assert (profile.provider, profile.protocol) == ("openai-compatible", "native")
    assert profile.context_window == DEFAULT_CONTEXT_WINDOW


def test_openai_compatible_without_key_uses_dummy() -> None:
    model = make_model("openai-compatible:m@http://127.0.0.1:9/v1", env={})
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value()


def test_profile_of_plain_chat_openai_guesses_provider_from_url() -> None:
    native = ChatOpenAI(model="gpt-4.1-mini", api_key=SecretStr("sk-test"))
    other_host = ChatOpenAI(model="x", api_key=SecretStr("k"), base_url="http://127.0.0.1:1/v1")
    assert model_profile(native).provider == "openai"
    assert model_profile(native).context_window == 1_047_576
    assert model_profile(other_host).provider == "openai-compatible"


def test_profile_of_any_other_model() -> None:
    fake = GenericFakeChatModel(messages=iter([AIMessage(content="hi")]))
    profile = model_profile(fake)
    assert profile.provider == "other"
    assert profile.protocol == "native"
    assert profile.model_name == "GenericFakeChatModel"
    assert not profile.is_local


def test_profile_sees_through_bind() -> None:
    model = make_model("openai:gpt-4o", env={"OPENAI_API_KEY": "sk-test"})
    bound = model.bind(stop=["x"])
    assert model_profile(bound).provider == "openai"  # type: ignore[arg-type] - unwraps .bind()


@pytest.mark.parametrize(
    ("name", "window"),
    [("gpt-4o-mini-2024-07-18", 128_000), ("openai/gpt-4o", 128_000), ("mystery", 8192)],
)
def test_context_window_table(name: str, window: int) -> None:
    assert context_window_for(name) == window
