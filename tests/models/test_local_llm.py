"""Integration tests against the embedded model over real HTTP (marked ``llm``)."""

from __future__ import annotations

import json
import re
import socket
import threading
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from noema_graph.errors import ConfigurationError, LLMError
from noema_graph.models import (
    LocalModelServer,
    bind_react_grammar,
    model_profile,
    shared_local_server,
    structured,
)
from noema_graph.models.local import LOCAL_MODEL_NAME

REACT_ACTION = re.compile(
    r"^Thought: [^\n]+\nAction: (?P<tool>[^\n]+)\nAction Input: (?P<input>.+)$"
)


class Capital(BaseModel):
    city: str = Field(description="name of the capital city")
    country: str = Field(description="name of the country")


def port_is_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_missing_model_file_is_a_configuration_error(tmp_path: Path) -> None:
    server = LocalModelServer(tmp_path / "absent.gguf")
    with pytest.raises(ConfigurationError, match=r"absent\.gguf"):
        server.start()
    assert not server.running


@pytest.mark.llm
def test_invalid_model_file_says_what_to_do(tmp_path: Path) -> None:
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf file" * 100)
    with pytest.raises(LLMError, match="valid GGUF"):
        LocalModelServer(junk).start()


@pytest.mark.llm
def test_profile_of_local_model(local_model: BaseChatModel) -> None:
    profile = model_profile(local_model)
    assert profile.provider == "local"
    assert profile.is_local
    assert profile.protocol == "react"
    assert profile.model_name == LOCAL_MODEL_NAME
    assert profile.context_window == shared_local_server().n_ctx


@pytest.mark.llm
def test_local_requests_carry_sampler_settings_the_server_accepts(
    local_model: BaseChatModel,
) -> None:
    from noema_graph.models.factory import LOCAL_SAMPLING

    assert getattr(local_model, "extra_body", None) == dict(LOCAL_SAMPLING)
    # llama.cpp validates each field (a dry_penalty_last_n of -1 is a 400 error)
    assert local_model.invoke("Say ok.").text


@pytest.mark.llm
def test_server_binds_loopback_only(local_model: BaseChatModel) -> None:
    assert shared_local_server().base_url.startswith("http://127.0.0.1:")


@pytest.mark.llm
def test_plain_chat_completion(local_model: BaseChatModel) -> None:
    reply = local_model.invoke("What is the capital of France? Answer in one sentence.")
    assert "Paris" in reply.text
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] > 0
    assert reply.usage_metadata["output_tokens"] > 0
    assert reply.response_metadata["model_name"] == LOCAL_MODEL_NAME


@pytest.mark.llm
async def test_streaming_yields_tokens_and_usage(local_model: BaseChatModel) -> None:
    chunks = [chunk async for chunk in local_model.astream("Count from one to five.")]
    assert sum(1 for c in chunks if c.text) > 3
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk)
    assert total.usage_metadata is not None
    assert total.usage_metadata["output_tokens"] >= sum(1 for c in chunks if c.text)


@pytest.mark.llm
def test_structured_output_validates(local_model: BaseChatModel) -> None:
    result = structured(local_model, Capital, include_raw=True).invoke(
        "What is the capital of Japan?"
    )
    assert result["parsing_error"] is None
    assert isinstance(result["parsed"], Capital)
    assert result["parsed"].city
    assert result["raw"].usage_metadata["output_tokens"] > 0


@pytest.mark.llm
def test_with_structured_output_json_schema_works_unchanged(local_model: BaseChatModel) -> None:
    parsed = local_model.with_structured_output(Capital, method="json_schema").invoke(
        "What is the capital of Italy?"
    )
    assert isinstance(parsed, Capital)


@pytest.mark.llm
def test_react_grammar_forces_a_registered_tool_with_json_input(
    react_model: BaseChatModel, tools: list[BaseTool]
) -> None:
    prompt = [
        ("system", "Use a tool. Reply as Thought:, Action:, Action Input: (JSON)."),
        ("user", "What is 17 * 23?"),
    ]
    reply = bind_react_grammar(react_model, tools).invoke(prompt)
    match = REACT_ACTION.match(reply.text)
    if match is None:  # the grammar also admits a final answer
        assert reply.text.startswith("Thought: ")
        assert "\nFinal Answer: " in reply.text
        return
    by_name = {tool.name: tool for tool in tools}
    assert match["tool"] in by_name
    args = json.loads(match["input"])
    assert isinstance(args, dict)
    schema = by_name[match["tool"]].args_schema
    assert isinstance(schema, type)
    assert issubclass(schema, BaseModel)
    schema.model_validate(args)


@pytest.mark.llm
def test_react_grammar_without_tools_gives_a_final_answer(react_model: BaseChatModel) -> None:
    reply = bind_react_grammar(react_model, []).invoke("Say hello.")
    assert reply.text.startswith("Thought: ")
    assert "\nFinal Answer: " in reply.text


@pytest.mark.llm
def test_stop_closes_the_port() -> None:
    server = LocalModelServer(n_ctx=512)
    server.start()
    port = server.port
    assert port_is_open(port)
    server.stop()
    assert not server.running
    assert not port_is_open(port)
    with pytest.raises(LLMError, match="not started"):
        _ = server.base_url


@pytest.mark.llm
def test_concurrent_start_loads_once() -> None:
    server = LocalModelServer(n_ctx=512)
    urls: list[str] = []
    threads = [threading.Thread(target=lambda: urls.append(server.start())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(set(urls)) == 1
    finally:
        server.stop()


def test_shared_server_is_one_per_process() -> None:
    assert shared_local_server() is shared_local_server()
