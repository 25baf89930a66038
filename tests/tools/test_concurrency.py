"""Which calls of one message may run concurrently, and how a message splits into groups."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import FAKE_SERVERS
from langchain_core.tools import BaseTool, StructuredTool, tool
from langchain_mcp_adapters.client import MultiServerMCPClient

from noema_graph.config import AgentConfig, MCPServer
from noema_graph.tools import MCPToolProvider, ToolRegistry, ToolSpec, toolkits_for
from noema_graph.tools.arguments import check_arguments
from noema_graph.tools.ask_user import ask_user_tool
from noema_graph.tools.concurrency import concurrency_safe, execution_groups

ANNOTATED = FAKE_SERVERS / "annotated.py"


@tool
def cd(folder: str) -> str:
    """Change directory."""
    return folder


@tool
def ls() -> str:
    """List the current directory."""
    return ""


ls.metadata = {"concurrency_safe": True}


def _spec(name: str, idempotency: Any) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=name,
        input_schema={"type": "object", "properties": {}},
        handler=lambda: {},
        idempotency=idempotency,
    )


SPECS = [_spec(name, name) for name in ("safe", "idempotent", "non_idempotent")]
REGISTERED = {t.name: t for t in ToolRegistry(SPECS).as_langchain_tools()}


def test_flag_and_read_only_idempotency_are_safe_anything_else_is_not() -> None:
    assert concurrency_safe(ls)  # metadata concurrency_safe=True
    assert not concurrency_safe(cd)  # nothing declared: it may have effects
    assert concurrency_safe(REGISTERED["safe"])
    assert not concurrency_safe(REGISTERED["idempotent"])  # repeatable is not order-free
    assert not concurrency_safe(REGISTERED["non_idempotent"])


def test_an_explicit_false_flag_wins_over_read_only_idempotency() -> None:
    pinned = StructuredTool.from_function(
        lambda: "", name="pinned", description="d", metadata={"idempotency": "safe"}
    )
    assert concurrency_safe(pinned)
    pinned.metadata = {"idempotency": "safe", "concurrency_safe": False}
    assert not concurrency_safe(pinned)
    truthy = StructuredTool.from_function(
        lambda: "", name="truthy", description="d", metadata={"concurrency_safe": "yes"}
    )
    assert not concurrency_safe(truthy)  # only True declares it


def test_builtin_toolkits_declare_their_read_only_tools() -> None:
    config = AgentConfig(enabled_toolkits=("file_edit", "bash", "search"))
    safe = {t.name for t in toolkits_for(config) if concurrency_safe(t)}
    unsafe = {t.name for t in toolkits_for(config) if not concurrency_safe(t)}
    assert {"read_file", "search"} <= safe
    assert {"write_file", "bash"} <= unsafe
    # read-only, but it pauses the run: it runs alone, never inside a concurrent group
    assert not concurrency_safe(ask_user_tool())


def calls(*names: str) -> list[dict[str, Any]]:
    return [{"name": name, "args": {}, "id": f"c{i}"} for i, name in enumerate(names)]


TOOLS: dict[str, BaseTool] = {"cd": cd, "ls": ls, **REGISTERED}


@pytest.mark.parametrize(
    ("names", "groups"),
    [
        ((), []),
        (("ls",), [[0]]),
        (("ls", "safe", "ls"), [[0, 1, 2]]),  # consecutive safe calls share one group
        (("cd", "cd", "cd"), [[0], [1], [2]]),  # unsafe calls run alone, in order
        (("ls", "cd", "ls", "safe", "cd"), [[0], [1], [2, 3], [4]]),  # order between groups kept
        (("cd", "ls", "ls"), [[0], [1, 2]]),
        (("ls", "nope", "ls"), [[0], [1], [2]]),  # an unknown tool is a group of its own
        (("idempotent", "non_idempotent"), [[0], [1]]),
    ],
)
def test_execution_groups_keep_message_order(
    names: tuple[str, ...], groups: list[list[int]]
) -> None:
    assert execution_groups(calls(*names), TOOLS) == groups


def annotated_server() -> MCPServer:
    return MCPServer(name="acct", command=sys.executable, args=(str(ANNOTATED),))


@pytest.fixture
def provider_tools() -> Iterator[dict[str, BaseTool]]:
    with MCPToolProvider([annotated_server()]) as provider:
        yield {t.name: t for t in provider.get_tools()}


@pytest.mark.mcp
def test_mcp_read_only_hint_is_safe_through_the_provider(
    provider_tools: dict[str, BaseTool],
) -> None:
    assert concurrency_safe(provider_tools["acct__get_total"])
    assert not concurrency_safe(provider_tools["acct__add"])
    names = ["acct__get_total", "acct__add", "acct__get_total", "acct__get_total"]
    assert execution_groups(calls(*names), provider_tools) == [[0], [1], [2, 3]]


@pytest.mark.mcp
def test_mcp_tool_arguments_are_coerced_and_the_call_runs(
    provider_tools: dict[str, BaseTool],
) -> None:
    add = provider_tools["acct__add"]
    args, error = check_arguments(add, {"amount": 2, "times": "3"})
    assert (args, error) == ({"amount": 2.0, "times": 3}, None)
    assert type(args["amount"]) is float
    assert (
        '"float 2.0"'
        in add.invoke({"type": "tool_call", "id": "c1", "name": add.name, "args": args}).content
    )
    _, error = check_arguments(add, {"amount": "two"})
    assert error == "Invalid argument 'amount' for tool 'acct__add': expected number, got 'two'."


@pytest.mark.mcp
def test_mcp_annotations_through_langchain_mcp_adapters() -> None:
    client = MultiServerMCPClient(
        {"acct": {"transport": "stdio", "command": sys.executable, "args": [str(ANNOTATED)]}}
    )
    tools = {t.name: t for t in asyncio.run(client.get_tools())}
    assert isinstance(tools["add"].args_schema, dict)  # a JSON-schema tool
    assert concurrency_safe(tools["get_total"])  # readOnlyHint
    assert not concurrency_safe(tools["add"])  # destructiveHint
    assert check_arguments(tools["add"], {"amount": 1}) == ({"amount": 1.0}, None)
