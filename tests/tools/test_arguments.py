"""Tool-call arguments checked against the tool's schema: JSON-schema and pydantic tools."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from langchain_core.tools import InjectedToolCallId, StructuredTool, tool
from pydantic import BaseModel, Field

from noema_graph.agents.domain_tools import domain_registry
from noema_graph.config import AgentConfig
from noema_graph.errors import ConfigurationError
from noema_graph.schemas import check_tool_schemas, compiled_schema
from noema_graph.tools import toolkits_for
from noema_graph.tools.arguments import check_arguments

RECEIVED: list[dict[str, Any]] = []


def _record(**arguments: Any) -> str:
    RECEIVED.append(arguments)
    return "ok"


def json_tool(name: str, schema: dict[str, Any]) -> StructuredTool:
    return StructuredTool.from_function(_record, name=name, description="d", args_schema=schema)


TRANSFER = json_tool(
    "transfer",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "count": {"type": "integer"},
            "memo": {"type": "string"},
            "limit": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "legs": {"type": "array", "items": {"$ref": "#/$defs/Leg"}},
            "tag": {},
        },
        "required": ["amount"],
        "additionalProperties": False,
        "$defs": {"Leg": {"type": "object", "properties": {"share": {"type": "number"}}}},
    },
)


class Filter(BaseModel):
    field: str
    op: Literal["eq", "lt"]


class ScaleArgs(BaseModel):
    factor: float = Field(description="multiplier")
    steps: int = 1
    label: str = ""
    filters: list[Filter] = Field(default_factory=list)


@tool(args_schema=ScaleArgs)
def scale(factor: float, steps: int = 1, label: str = "", filters: object = ()) -> str:
    """Scale something."""
    return f"{type(factor).__name__} {factor}"


@tool
def reply(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Reply with text."""
    return text


@pytest.fixture(autouse=True)
def _clear() -> None:
    RECEIVED.clear()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"amount": 3}, {"amount": 3.0}),  # int -> float where the schema says number
        ({"amount": "2.5", "count": "7"}, {"amount": 2.5, "count": 7}),  # numeric strings
        ({"amount": 1, "memo": "5"}, {"amount": 1.0, "memo": "5"}),  # a string stays a string
        ({"amount": 1, "count": 4}, {"amount": 1.0, "count": 4}),  # integer stays int
        ({"amount": 1, "limit": "0.5"}, {"amount": 1.0, "limit": 0.5}),  # anyOf number|null
        ({"amount": 1, "limit": None}, {"amount": 1.0, "limit": None}),
        ({"amount": 1, "legs": [{"share": 1}, {"share": "0.25"}]},
         {"amount": 1.0, "legs": [{"share": 1.0}, {"share": 0.25}]}),  # through $ref
        ({"amount": 1, "tag": "7"}, {"amount": 1.0, "tag": "7"}),  # untyped: never coerced
        ({"amount": 2**60}, {"amount": 2**60}),  # a float would lose digits: kept
    ],
)  # fmt: skip
def test_json_schema_arguments_are_coerced_only_where_lossless(
    given: dict[str, Any], expected: dict[str, Any]
) -> None:
    args, error = check_arguments(TRANSFER, given)
    assert error is None
    assert args == expected
    assert [type(v) for v in args.values()] == [type(v) for v in expected.values()]
    TRANSFER.invoke(args)
    assert [expected] == RECEIVED  # LangChain passes a JSON-schema tool's arguments through


@pytest.mark.parametrize(
    ("given", "argument", "expected", "got"),
    [
        ({"amount": "abc"}, "amount", "number", "'abc'"),
        ({"amount": "1e400"}, "amount", "number", "'1e400'"),  # not a finite number
        ({"amount": True}, "amount", "number", "True"),  # a boolean is not a number
        ({"amount": 1, "count": "7.0"}, "count", "integer", "'7.0'"),
        ({"amount": 1, "count": "007"}, "count", "integer", "'007'"),  # not a JSON literal
        ({"amount": 1, "count": 1.5}, "count", "integer", "1.5"),
        ({"amount": 1, "limit": "x"}, "limit", "number or null", "'x'"),
        ({"amount": 1, "legs": [{"share": "a"}]}, "legs[0].share", "number", "'a'"),
    ],
)
def test_bad_json_schema_arguments_name_the_argument(
    given: dict[str, Any], argument: str, expected: str, got: str
) -> None:
    args, text = check_arguments(TRANSFER, given)
    assert text == (
        f"Invalid argument {argument!r} for tool 'transfer': expected {expected}, got {got}."
    )
    assert args == given  # nothing coerced when the call is refused


def test_missing_and_unexpected_json_schema_arguments() -> None:
    assert check_arguments(TRANSFER, {"count": 1})[1] == (
        "Missing argument 'amount' for tool 'transfer'."
    )
    assert check_arguments(TRANSFER, {"amount": 1, "colour": "red"})[1] == (
        "Invalid arguments for tool 'transfer': "
        "Additional properties are not allowed ('colour' was unexpected)."
    )


def test_every_bad_argument_is_named_once() -> None:
    _, text = check_arguments(TRANSFER, {"count": "x", "memo": 3})
    assert text == (
        "Missing argument 'amount' for tool 'transfer'. "
        "Invalid argument 'count' for tool 'transfer': expected integer, got 'x'. "
        "Invalid argument 'memo' for tool 'transfer': expected string, got 3."
    )


@pytest.mark.parametrize(
    ("given", "described"),
    [([1, 2], "array [1, 2]"), ("amount=3", "string 'amount=3'"), (None, "null"), (7, "integer 7")],
)
def test_arguments_that_are_not_an_object_are_refused(given: object, described: str) -> None:
    args, text = check_arguments(TRANSFER, given)
    assert args == {}
    assert text == (
        "Invalid arguments for tool 'transfer': expected an object of named arguments, "
        f"got {described}."
    )


def test_pydantic_tool_int_arrives_as_float_and_numeric_strings_as_numbers() -> None:
    args, error = check_arguments(scale, {"factor": 2, "steps": "3", "label": "4"})
    assert error is None
    assert args == {"factor": 2.0, "steps": 3, "label": "4"}
    assert type(args["factor"]) is float and type(args["steps"]) is int
    assert scale.invoke(args) == "float 2.0"


def test_pydantic_tool_keeps_arguments_it_does_not_coerce_losslessly() -> None:
    given = {"factor": 1.5, "filters": [{"field": "a", "op": "eq"}]}
    args, error = check_arguments(scale, given)
    assert error is None
    assert args == given  # nested values stay as sent; no defaults are added


@pytest.mark.parametrize(
    ("given", "argument", "expected"),
    [
        ({"factor": "abc"}, "factor", "expected number, got 'abc'"),
        ({"factor": 1, "steps": 1.5}, "steps", "expected integer, got 1.5"),
        (
            {"factor": 1, "filters": [{"field": "a", "op": "ne"}]},
            "filters[0].op",
            "input should be 'eq' or 'lt', got 'ne'",
        ),
    ],
)
def test_bad_pydantic_arguments_name_the_argument(
    given: dict[str, Any], argument: str, expected: str
) -> None:
    text = f"Invalid argument {argument!r} for tool 'scale': {expected}."
    assert check_arguments(scale, given) == (given, text)


def test_missing_pydantic_argument() -> None:
    text = "Missing argument 'factor' for tool 'scale'."
    assert check_arguments(scale, {"steps": 1}) == ({"steps": 1}, text)


def test_injected_arguments_are_not_required_from_the_model() -> None:
    assert check_arguments(reply, {"text": "hi"}) == ({"text": "hi"}, None)


def test_validators_are_compiled_once_per_tool_and_again_for_a_new_schema() -> None:
    tool_ = json_tool("cached", {"type": "object", "properties": {"x": {"type": "number"}}})
    first = compiled_schema(tool_)
    assert compiled_schema(tool_) is first
    tool_.args_schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    assert compiled_schema(tool_) is not first
    assert check_arguments(tool_, {"x": 1})[1] == (
        "Invalid argument 'x' for tool 'cached': expected string, got 1."
    )


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"a": {"type": "numbr"}}},
         "'numbr' is not valid under any of the given schemas (at properties/a/type)"),
        ({"type": "object", "required": "a"}, "'a' is not of type 'array' (at required)"),
        ({"type": "string"}, "the arguments must be an object, but the schema's type is 'string'"),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}},
         "$ref '#/$defs/Missing' does not resolve (at properties/a)"),
    ],
)  # fmt: skip
def test_an_invalid_schema_is_a_build_time_error_naming_the_tool(
    schema: dict[str, Any], problem: str
) -> None:
    broken = json_tool("broken", schema)
    with pytest.raises(ConfigurationError) as caught:
        check_tool_schemas([TRANSFER, scale, broken])
    assert caught.value.field == "tools"
    assert str(caught.value).startswith(
        f"tools: tool 'broken' has an invalid argument schema: {problem} (fix: "
    )
    assert check_arguments(broken, {"a": 1}) == (
        {"a": 1},
        f"Tool 'broken' has an invalid argument schema: {problem}.",
    )


def test_valid_schemas_pass_including_every_builtin_and_domain_tool(tmp_path: Path) -> None:
    config = AgentConfig(enabled_toolkits=("file_edit", "bash", "python_executor", "search"))
    builtins = toolkits_for(config)
    domain = domain_registry(tmp_path / "noema.sqlite").as_langchain_tools()
    assert builtins and domain
    check_tool_schemas([TRANSFER, scale, reply, *builtins, *domain])
    data_refs = json_tool(
        "data_refs",
        {"type": "object", "properties": {"a": {"const": {"$ref": "#/not/a/ref"}}}},
    )
    check_tool_schemas([data_refs])  # a "$ref" key inside const is data, not a reference
