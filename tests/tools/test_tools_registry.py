"""ToolRegistry, ToolRunner and the LangChain view: validation, permissions, retries."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from noema_graph.errors import ConfigurationError, ToolError
from noema_graph.tools import (
    RetryPolicy,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolRunner,
    ToolSpec,
    TransientToolFailure,
    render_observation,
)


class EchoArgs(BaseModel):
    text: str = Field(description="What to echo.")
    times: int = Field(default=1, ge=1, le=5)


def echo(text: str, times: int) -> dict[str, str]:
    return {"echo": text * times}


async def aecho(text: str, times: int) -> dict[str, str]:
    await asyncio.sleep(0)
    return {"echo": text * times}


def spec(name: str = "echo", **kwargs: object) -> ToolSpec:
    fields: dict[str, object] = {
        "name": name,
        "description": "Echo text.",
        "input_schema": EchoArgs,
        "handler": echo,
        "idempotency": "safe",
    }
    fields.update(kwargs)
    return ToolSpec(**fields)


def call(tool_name: str, args: dict[str, object]) -> dict[str, object]:
    return {"type": "tool_call", "id": "call-1", "name": tool_name, "args": args}


def runner(*permissions: str, timeout_s: float = 5.0) -> ToolRunner:
    context = ToolContext(permissions=frozenset(permissions), timeout_s=timeout_s)
    return ToolRunner(context, retry=RetryPolicy(max_attempts=3, initial_delay_s=0.01))


def test_register_get_list_unregister() -> None:
    registry = ToolRegistry()
    first = registry.register(spec("a"))
    registry.register_many([spec("b"), spec("c")])
    assert registry.get("a") is first
    assert [s.name for s in registry.list()] == ["a", "b", "c"]
    assert registry.unregister("b").name == "b"
    assert "b" not in registry
    assert len(registry) == 2


def test_duplicate_name_raises_configuration_error() -> None:
    registry = ToolRegistry([spec("a")])
    with pytest.raises(ConfigurationError, match="'a' is already registered"):
        registry.register(spec("a"))


def test_unknown_name_raises_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="no tool named 'zzz'"):
        ToolRegistry().get("zzz")


def test_invalid_tool_name_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="not a valid tool name"):
        spec("bad name!")


def test_invalid_input_names_the_field() -> None:
    result = runner().run(spec(), {"text": "x", "times": 9})
    assert result.status == "error"
    assert result.error is not None
    assert result.error.type == "invalid_input"
    assert "'times'" in result.error.message
    assert result.error.details["errors"][0]["field"] == "times"


def test_missing_field_is_named_for_json_schema_tools() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    json_spec = ToolSpec(name="j", description="d", input_schema=schema, handler=lambda q: q)
    result = runner().run(json_spec, {})
    assert result.error is not None
    assert "field 'q'" in result.error.message


def test_permission_denied_is_an_observation() -> None:
    guarded = spec(permission="fs:write")
    result = runner("fs:read").run(guarded, {"text": "x"})
    assert result.status == "error"
    assert result.message == "permission denied: echo needs fs:write"
    assert runner("fs:write").run(guarded, {"text": "x"}).status == "success"


def test_sync_handler_timeout() -> None:
    slow = spec(handler=lambda text, times: time.sleep(2))
    started = time.monotonic()
    result = runner(timeout_s=0.2).run(slow, {"text": "x"})
    assert result.error is not None
    assert result.error.type == "timeout"
    assert time.monotonic() - started < 1.5


async def test_async_handler_timeout() -> None:
    async def forever(text: str, times: int) -> None:
        await asyncio.sleep(10)

    result = await runner(timeout_s=0.2).arun(spec(handler=forever), {"text": "x"})
    assert result.error is not None
    assert result.error.type == "timeout"


def flaky(failures: int) -> tuple[list[int], object]:
    attempts: list[int] = []

    def handler(text: str, times: int) -> dict[str, int]:
        attempts.append(1)
        if len(attempts) <= failures:
            msg = "service busy"
            raise TransientToolFailure(msg)
        return {"attempts": len(attempts)}

    return attempts, handler


@pytest.mark.parametrize("idempotency", ["safe", "idempotent"])
def test_transient_errors_are_retried_for_safe_tools(idempotency: str) -> None:
    attempts, handler = flaky(2)
    result = runner().run(spec(handler=handler, idempotency=idempotency), {"text": "x"})
    assert result.status == "success"
    assert len(attempts) == 3


async def test_async_retry_gives_up_after_max_attempts() -> None:
    attempts, handler = flaky(10)
    result = await runner().arun(spec(handler=handler), {"text": "x"})
    assert result.error is not None
    assert result.error.type == "transient"
    assert result.error.details["attempts"] == 3
    assert len(attempts) == 3


def test_non_idempotent_tools_are_never_retried() -> None:
    attempts, handler = flaky(1)
    result = runner().run(spec(handler=handler, idempotency="non_idempotent"), {"text": "x"})
    assert result.status == "error"
    assert len(attempts) == 1


def test_os_errors_become_observations() -> None:
    def missing(text: str, times: int) -> str:
        return Path("/definitely/not/here").read_text()

    result = runner().run(spec(handler=missing), {"text": "x"})
    assert result.error is not None
    assert result.error.type == "FileNotFoundError"


def test_bugs_in_handlers_raise_tool_error() -> None:
    def buggy(text: str, times: int) -> None:
        raise KeyError("oops")

    with pytest.raises(ToolError, match="'echo' raised KeyError"):
        runner().run(spec(handler=buggy), {"text": "x"})


def test_langchain_tool_sync_and_metadata() -> None:
    tools = ToolRegistry([spec(permission="fs:read")]).as_langchain_tools(permissions=["fs:read"])
    tool = tools[0]
    assert isinstance(tool, StructuredTool)
    assert tool.metadata == {"idempotency": "safe", "permission": "fs:read"}
    message = tool.invoke(call("echo", {"text": "ab", "times": 2}))
    assert isinstance(message, ToolMessage)
    assert message.status == "success"
    assert json.loads(message.content)["data"] == {"echo": "abab"}
    assert message.artifact == ToolResult.ok({"echo": "abab"})


async def test_langchain_tool_async_error_message() -> None:
    tool = ToolRegistry([spec(handler=aecho)]).as_langchain_tools()[0]
    message = await tool.ainvoke(call("echo", {"times": 2}))
    assert message.status == "error"
    assert message.artifact.error.type == "invalid_input"
    assert "'text'" in json.loads(message.content)["error"]["message"]


def test_sync_invoke_of_async_handler_inside_running_loop() -> None:
    tool = ToolRegistry([spec(handler=aecho)]).as_langchain_tools()[0]

    async def main() -> ToolMessage:
        return tool.invoke(call("echo", {"text": "z"}))

    assert asyncio.run(main()).status == "success"


def test_large_outputs_are_truncated_but_kept_in_the_artifact() -> None:
    big = spec(handler=lambda text, times: {"blob": "x" * 50_000})
    tool = ToolRegistry([big]).as_langchain_tools(max_observation_chars=1_000)[0]
    message = tool.invoke(call("echo", {"text": "x"}))
    assert len(message.content) <= 1_000
    view = json.loads(message.content)
    assert view["truncated"] is True
    assert view["full_chars"] > 50_000
    assert len(message.artifact.data["blob"]) == 50_000


def test_render_observation_keeps_small_results_whole() -> None:
    result = ToolResult.fail("x", "boom", details={"a": 1})
    assert json.loads(render_observation(result)) == result.model_dump(exclude_none=True)


@pytest.mark.parametrize("cap", [200, 500, 3_000])
def test_render_observation_respects_any_cap(cap: int) -> None:
    result = ToolResult.ok({"text": 'quo"te\n' * 5_000}, message="m" * 10_000)
    text = render_observation(result, cap)
    assert len(text) <= cap
    json.loads(text)
