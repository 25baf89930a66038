from __future__ import annotations

from datetime import datetime
from typing import Literal

import pytest
from langchain_core.runnables import RunnableBinding
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, SecretStr

from noema_graph.errors import ConfigurationError
from noema_graph.models import bind_react_grammar, make_model, react_grammar
from noema_graph.models.grammar import MAX_ANSWER_CHARS, gbnf_literal, grammar_rule_names
from noema_graph.models.profile import PROVIDER_KEY


class Filter(BaseModel):
    field: str
    op: Literal["eq", "lt", "gt"]


class QueryArgs(BaseModel):
    table: str = Field(description="table name")
    limit: int | None = None
    filters: list[Filter] = Field(default_factory=list)
    verbose: bool = False


def _query(
    table: str, limit: int | None = None, filters: object = (), verbose: bool = False
) -> str:
    return table


query_tool = StructuredTool.from_function(
    _query, name="db.query", description="Query a table.", args_schema=QueryArgs
)


def assert_well_formed(grammar: str) -> None:
    defined, referenced = grammar_rule_names(grammar)
    assert "root" in defined
    assert referenced <= defined, referenced - defined


def test_grammar_lists_each_tool_as_an_action(tools: list[BaseTool]) -> None:
    grammar = react_grammar(tools)
    assert_well_formed(grammar)
    assert '"Action: " ( ( "search"' in grammar
    assert '( "calculator" "\\nAction Input: "' in grammar
    assert '"Final Answer: "' in grammar


def test_action_input_follows_args_schema(tools: list[BaseTool]) -> None:
    grammar = react_grammar(tools)
    # search(query: str, max_results: int = 3): query required first, max_results optional.
    expected = (
        '"{" ws "\\"query\\"" ws ":" ws string '
        '( ws "," ws "\\"max_results\\"" ws ":" ws integer )? ws "}"'
    )
    assert expected in grammar


def test_nested_schema_with_refs_enums_and_optionals() -> None:
    grammar = react_grammar([query_tool])
    assert_well_formed(grammar)
    assert gbnf_literal("db.query") in grammar
    assert '"\\"eq\\"" | "\\"lt\\"" | "\\"gt\\""' in grammar
    assert "integer | null" in grammar
    assert '"[" ws' in grammar


def test_without_tools_only_a_final_answer() -> None:
    grammar = react_grammar([])
    assert_well_formed(grammar)
    assert grammar.startswith("root ::= thought final")
    assert "Action:" not in grammar


def test_literal_escaping() -> None:
    assert gbnf_literal('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_untyped_args_fall_back_to_any_json_object() -> None:
    loose = StructuredTool.from_function(
        lambda **kwargs: "",
        name="loose",
        description="Anything.",
        args_schema={"type": "object", "properties": {}},
    )
    grammar = react_grammar([loose])
    assert_well_formed(grammar)
    assert '"loose" "\\nAction Input: " object' in grammar


def test_non_local_models_stop_before_an_observation_of_their_own(
    tools: list[BaseTool],
) -> None:
    openai = make_model("openai:gpt-4o", env={"OPENAI_API_KEY": "sk-test"})
    bound = bind_react_grammar(openai, tools)
    assert isinstance(bound, RunnableBinding)
    assert bound.bound is openai and bound.kwargs == {"stop": ["\nObservation:"]}
    request = openai._get_request_payload("hi", **bound.kwargs)  # what goes over the wire
    assert request["stop"] == ["\nObservation:"] and "grammar" not in str(request)


def test_local_models_get_the_grammar_in_extra_body(tools: list[BaseTool]) -> None:
    from langchain_openai import ChatOpenAI

    local = ChatOpenAI(
        model="m",
        api_key=SecretStr("k"),
        base_url="http://127.0.0.1:1/v1",
        metadata={PROVIDER_KEY: "local"},
    )
    bound = bind_react_grammar(local, tools)
    assert bound is not local
    assert isinstance(bound, RunnableBinding)
    assert bound.kwargs["extra_body"]["grammar"] == react_grammar(tools)


def test_the_grammar_keeps_the_models_sampler_settings(tools: list[BaseTool]) -> None:
    from langchain_openai import ChatOpenAI

    local = ChatOpenAI(
        model="m",
        api_key=SecretStr("k"),
        base_url="http://127.0.0.1:1/v1",
        metadata={PROVIDER_KEY: "local"},
        extra_body={"dry_multiplier": 0.8},
    )
    bound = bind_react_grammar(local, tools)
    assert isinstance(bound, RunnableBinding)
    # a bound extra_body replaces the model's: both must travel in it
    assert bound.kwargs["extra_body"] == {"dry_multiplier": 0.8, "grammar": react_grammar(tools)}
    assert local.extra_body == {"dry_multiplier": 0.8}


class WindowArgs(BaseModel):
    deck_id: int | None = None
    since: datetime | None = None
    label: str = Field(default="", max_length=12)


window_tool = StructuredTool.from_function(
    lambda **kwargs: "", name="window", description="A window.", args_schema=WindowArgs
)


def test_optional_only_keys_appear_at_most_once_in_order() -> None:
    grammar = react_grammar([window_tool])
    assert_well_formed(grammar)
    # a chain of optional pairs: no "( kv ( , kv )* )" loop that lets a key repeat
    assert "tool0-args-seq0 ::=" in grammar and ")*" not in grammar.split("ws ::=")[0]
    seq0 = next(line for line in grammar.splitlines() if line.startswith("tool0-args-seq0"))
    assert '"\\"deck_id\\""' in seq0 and "tool0-args-seq1" in seq0


def test_strings_are_bounded_by_max_length_and_date_format() -> None:
    grammar = react_grammar([window_tool])
    assert 'char{0,12} "\\""' in grammar  # label: maxLength 12
    assert '"\\"" json-date-time? "\\""' in grammar  # since: a real date-time, or ""


def test_a_tool_without_arguments_admits_only_an_empty_object() -> None:
    bare = StructuredTool.from_function(
        lambda **kwargs: "",
        name="bare",
        description="No arguments.",
        args_schema={"type": "object", "properties": {}, "additionalProperties": False},
    )
    grammar = react_grammar([bare])
    assert_well_formed(grammar)
    assert 'tool0-args ::= "{" ws "}"' in grammar


def test_the_final_answer_is_bounded() -> None:
    assert f"[^\\x00]{{1,{MAX_ANSWER_CHARS}}}" in react_grammar([])
    assert "[^\\x00]{1,300}" in react_grammar([], max_answer_chars=300)


def test_an_invalid_args_schema_raises_naming_the_tool() -> None:
    broken = StructuredTool.from_function(
        lambda **kwargs: "",
        name="broken",
        description="Bad schema.",
        args_schema={"type": "object", "properties": {"n": {"type": "integr"}}},
    )
    with pytest.raises(ConfigurationError, match="tool 'broken' has an invalid argument schema"):
        react_grammar([query_tool, broken])


def test_tool_args_schema_is_converted_once_per_tool_and_each_caller_gets_a_copy() -> None:
    from noema_graph.models import grammar

    tool = StructuredTool.from_function(
        _query, name="db.query2", description="Query a table.", args_schema=QueryArgs
    )
    first = grammar.tool_args_schema(tool)
    first["properties"]["table"]["type"] = "integer"  # the caller's own copy
    second = grammar.tool_args_schema(tool)
    assert second["properties"]["table"]["type"] == "string"
    assert grammar._SCHEMAS[id(tool)][2] == second  # pyright: ignore[reportPrivateUsage] -- the cache under test

    class Fewer(BaseModel):
        table: str

    tool.args_schema = Fewer  # a changed tool is converted again
    assert set(grammar.tool_args_schema(tool)["properties"]) == {"table"}
