"""The whole argument schema enforced while decoding: numeric ranges and real dates.

Membership is checked with the small GBNF matcher of ``tests/models/gbnf.py``; one test sends
a range-constrained grammar to the embedded llama.cpp server, which must parse it and keep
the model's value in range.
"""

from __future__ import annotations

import json
import random
import re
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableBinding
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field, SecretStr, TypeAdapter, ValidationError

from noema_graph.errors import ConfigurationError
from noema_graph.models import bind_react_grammar, make_model, react_grammar
from noema_graph.models.grammar import numeric_range
from noema_graph.models.profile import PROVIDER_KEY
from noema_graph.noema.ops.common import OptionalTime
from tests.models.gbnf import Grammar


def _tool(name: str, schema: type[BaseModel]) -> BaseTool:
    return StructuredTool.from_function(
        lambda **kwargs: "", name=name, description=f"{name}.", args_schema=schema
    )


def _admits_input(grammar: Grammar, tool: str, arguments: str) -> bool:
    return grammar.admits(f"Thought: go\nAction: {tool}\nAction Input: {arguments}")


def _range_grammar(schema: dict[str, Any], *, integer: bool) -> Grammar:
    body = numeric_range(schema, integer=integer)
    assert body is not None
    return Grammar.parse(f"root ::= {body}")


class StatsArgs(BaseModel):
    user_id: int = Field(ge=1)
    window_days: int = Field(default=30, ge=1, le=3650)
    limit: int | None = Field(default=None, gt=0, lt=5001)
    confidence: float = Field(default=0.5, ge=0, le=1)
    offset: int = Field(default=0, ge=-10, le=-2)


stats = _tool("learning_stats", StatsArgs)


@pytest.mark.parametrize(
    ("arguments", "admitted"),
    [
        ('{"user_id": 1}', True),
        ('{"user_id": 0}', False),
        ('{"user_id": -1}', False),
        ('{"user_id": 1, "window_days": 3650}', True),
        ('{"user_id": 1, "window_days": 3651}', False),
        ('{"user_id": 1, "window_days": 1000000000000000}', False),
        ('{"user_id": 1, "window_days": 1}', True),
        ('{"user_id": 1, "window_days": 0}', False),
        ('{"user_id": 1, "limit": 5000}', True),  # Optional[int]: the bounds of anyOf's branch
        ('{"user_id": 1, "limit": 5001}', False),
        ('{"user_id": 1, "limit": 500000000000000}', False),
        ('{"user_id": 1, "limit": 1}', True),
        ('{"user_id": 1, "limit": 0}', False),
        ('{"user_id": 1, "limit": null}', True),
        ('{"user_id": 1, "confidence": 0}', True),
        ('{"user_id": 1, "confidence": 1}', True),
        ('{"user_id": 1, "confidence": 1.0}', True),
        ('{"user_id": 1, "confidence": 0.92}', True),
        ('{"user_id": 1, "confidence": 1.01}', False),
        ('{"user_id": 1, "confidence": -0.01}', False),
        ('{"user_id": 1, "confidence": 1e3}', False),
        ('{"user_id": 1, "offset": -10}', True),
        ('{"user_id": 1, "offset": -2}', True),
        ('{"user_id": 1, "offset": -11}', False),
        ('{"user_id": 1, "offset": -1}', False),
        ('{"user_id": 1, "offset": 0}', False),
    ],
)
def test_a_tools_numeric_ranges_are_enforced(arguments: str, admitted: bool) -> None:
    grammar = Grammar.parse(react_grammar([stats]))
    assert _admits_input(grammar, "learning_stats", arguments) is admitted
    if admitted:  # whatever the grammar admits, the tool's schema accepts
        StatsArgs.model_validate(json.loads(arguments))


INTEGER_RANGES = [
    {"minimum": 0},
    {"minimum": 7},
    {"maximum": 12},
    {"exclusiveMaximum": -3},
    {"minimum": -5, "exclusiveMaximum": 10},
    {"minimum": 0, "maximum": 3650},
    {"exclusiveMinimum": 99, "maximum": 1001},
    {"minimum": -1234, "maximum": -987},
    {"minimum": 2.5, "maximum": 7.5},  # non-integer bounds of an integer: 3..7
    {"minimum": 4, "exclusiveMinimum": 4, "maximum": 9, "exclusiveMaximum": 10},
]


@pytest.mark.parametrize("schema", INTEGER_RANGES)
def test_an_integer_range_admits_exactly_its_integers(schema: dict[str, Any]) -> None:
    grammar = _range_grammar(schema, integer=True)
    low = max([schema.get("minimum", -(10**6)), schema.get("exclusiveMinimum", -(10**6) - 1) + 1])
    high = min([schema.get("maximum", 10**6), schema.get("exclusiveMaximum", 10**6 + 1) - 1])
    for value in range(-1300, 4000):
        assert grammar.admits(str(value)) is (low <= value <= high), value
    assert not grammar.admits("-0") and not grammar.admits("007") and not grammar.admits("1.0")


def test_an_unbounded_side_stays_within_sixteen_digits() -> None:
    grammar = _range_grammar({"minimum": 0}, integer=True)
    assert grammar.admits("9" * 16)
    assert not grammar.admits("1" + "0" * 16)
    assert not grammar.admits("-1")  # only a minimum of 0: no minus sign at all


NUMBER_RANGES = [
    ({"minimum": 0, "maximum": 1}, Decimal(0), True, Decimal(1), True),
    ({"minimum": 0, "maximum": 100}, Decimal(0), True, Decimal(100), True),
    ({"minimum": 0}, Decimal(0), True, None, True),
    ({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, Decimal(0), False, Decimal(1), False),
    ({"minimum": -2, "exclusiveMaximum": 3}, Decimal(-2), True, Decimal(3), False),
    ({"minimum": 0.5, "maximum": 2.25}, Decimal("0.5"), True, Decimal("2.25"), True),
    ({"exclusiveMinimum": -0.75}, Decimal("-0.75"), False, None, True),
]


def _in(
    value: Decimal, low: Decimal | None, low_in: bool, high: Decimal | None, high_in: bool
) -> bool:
    above = low is None or value > low or (low_in and value == low)
    below = high is None or value < high or (high_in and value == high)
    return above and below


def _samples(seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["0", "1", "-1", "0.5", "1.0", "1.00", "2.25", "2.250", "2.26", "0.75", "-0.75"]
    for _ in range(400):
        whole = rng.choice([0, 1, 2, 3, 99, 100, 101, rng.randrange(0, 300)])
        sign = rng.choice(["", "", "-"])
        decimals = rng.choice([0, 1, 2, 3, 5])
        fraction = "".join(rng.choice("0123456789") for _ in range(decimals))
        texts.append(f"{sign}{whole}" + (f".{fraction}" if fraction else ""))
    return texts


@pytest.mark.parametrize(("schema", "low", "low_in", "high", "high_in"), NUMBER_RANGES)
def test_a_number_range_admits_exactly_its_values(
    schema: dict[str, Any], low: Decimal, low_in: bool, high: Decimal | None, high_in: bool
) -> None:
    grammar = _range_grammar(schema, integer=False)
    for text in _samples(len(str(schema))):
        if text.startswith("-0") and Decimal(text) == 0:
            continue  # "-0" and "-0.0" are refused; 0 itself is written "0"
        assert grammar.admits(text) is _in(Decimal(text), low, low_in, high, high_in), text


@pytest.mark.parametrize(
    ("schema", "inside", "outside"),
    [
        ({"minimum": 0, "maximum": 1}, ["0", "1", "0.0", "1.000"], ["-0.0001", "1.0001", "2"]),
        ({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, ["0.0001", "0.9999"], ["0", "1", "0.0"]),
        ({"minimum": 0, "maximum": 100}, ["0", "100", "99.99"], ["100.01", "-1"]),
    ],
)
def test_number_bounds_are_admitted_and_values_just_outside_refused(
    schema: dict[str, Any], inside: list[str], outside: list[str]
) -> None:
    grammar = _range_grammar(schema, integer=False)
    assert all(grammar.admits(text) for text in inside)
    assert not any(grammar.admits(text) for text in outside)


def test_a_bound_with_many_decimals_is_rounded_inward_never_outward() -> None:
    grammar = _range_grammar({"minimum": 0.1234567, "maximum": 0.7654321}, integer=False)
    assert grammar.admits("0.5") and grammar.admits("0.123457") and grammar.admits("0.765432")
    for text in ("0.1234566", "0.123456", "0.12", "0.7654322", "0.765433", "0.77"):
        assert not grammar.admits(text), text  # below the minimum or above the maximum


def test_an_empty_range_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="admits no value") as info:
        numeric_range({"minimum": 5, "maximum": 4}, integer=True)
    assert "maximum" in str(info.value)
    with pytest.raises(ConfigurationError, match="admits no value"):
        numeric_range({"exclusiveMinimum": 1, "exclusiveMaximum": 2}, integer=True)


def test_a_type_list_keeps_its_bounds() -> None:
    tool = StructuredTool.from_function(
        lambda **kwargs: "",
        name="pick",
        description="Pick.",
        args_schema={
            "type": "object",
            "properties": {"n": {"type": ["integer", "null"], "minimum": 1, "maximum": 3}},
            "required": ["n"],
        },
    )
    grammar = Grammar.parse(react_grammar([tool]))
    assert _admits_input(grammar, "pick", '{"n": 3}')
    assert _admits_input(grammar, "pick", '{"n": null}')
    assert not _admits_input(grammar, "pick", '{"n": 4}')


class WhenArgs(BaseModel):
    day: date
    since: OptionalTime = Field(default=None, description="Defaults to now.")


when = _tool("when", WhenArgs)


@pytest.mark.parametrize(
    ("day", "admitted"),
    [
        ("2024-02-29", True),
        ("1999-12-31", True),
        ("2024-01-01", True),
        ("", False),  # a required date is a real one
        ("2024-13-01", False),
        ("2024-00-10", False),
        ("2024-01-32", False),
        ("2024-01-00", False),
        ("2024-1-1", False),
        ("24-01-01", False),
        ("2024-01-01T10:00Z", False),
        (".1234567890123456789012345678901", False),
    ],
)
def test_a_date_is_a_real_date(day: str, admitted: bool) -> None:
    grammar = Grammar.parse(react_grammar([when]))
    assert _admits_input(grammar, "when", json.dumps({"day": day})) is admitted


def test_an_optional_date_may_be_blank_or_null() -> None:
    class MaybeDay(BaseModel):
        day: date | None = None

    grammar = Grammar.parse(react_grammar([_tool("maybe", MaybeDay)]))
    for arguments in ('{"day": ""}', '{"day": null}', "{}", '{"day": "2024-02-29"}'):
        assert _admits_input(grammar, "maybe", arguments), arguments
    assert not _admits_input(grammar, "maybe", '{"day": "2024-02-3"}')


@pytest.mark.parametrize(
    ("since", "admitted"),
    [
        ("2024-05-01T10:00Z", True),
        ("2024-05-01T10:00:59Z", True),
        ("2024-05-01T23:59:59.123456+02:00", True),
        ("2024-05-01T00:00:00-11:30", True),
        ("", True),  # optional (OptionalTime): the domain tools read a blank as not given
        ("2024-05-01", False),
        ("2024-05-01 10:00Z", False),
        ("2024-05-01T24:00Z", False),
        ("2024-05-01T10:60Z", False),
        ("2024-05-01T10:00", False),  # RFC 3339 names the offset
        ("2024-05-01T10:00+2:00", False),
        (".1234567890123456789012345678901", False),
    ],
)
def test_a_date_time_is_an_rfc3339_date_time(since: str, admitted: bool) -> None:
    grammar = Grammar.parse(react_grammar([when]))
    arguments = json.dumps({"day": "2024-05-01", "since": since})
    assert _admits_input(grammar, "when", arguments) is admitted
    if admitted:  # the tool reads every admitted value (a blank as not given)
        parsed = WhenArgs.model_validate_json(arguments)
        assert isinstance(parsed.since, datetime) or (since == "" and parsed.since is None)


def test_admitted_dates_parse_as_dates() -> None:
    adapter = TypeAdapter(date)
    assert adapter.validate_python("2024-02-29") == date(2024, 2, 29)
    with pytest.raises(ValidationError):  # a grammar cannot count days per month
        adapter.validate_python("2023-02-30")


def test_schemas_replace_a_tools_own_argument_schema() -> None:
    narrowed = {
        "type": "object",
        "properties": {"user_id": {"type": "integer", "enum": [1, 2]}},
        "required": ["user_id"],
        "additionalProperties": False,
    }
    plain = react_grammar([stats, when])
    grammar = react_grammar([stats, when], schemas={"learning_stats": narrowed})
    parsed = Grammar.parse(grammar)
    assert _admits_input(parsed, "learning_stats", '{"user_id": 2}')
    assert not _admits_input(parsed, "learning_stats", '{"user_id": 3}')
    assert not _admits_input(parsed, "learning_stats", '{"user_id": 1, "window_days": 30}')
    # the other tool keeps its own schema, rule for rule
    assert re.findall(r"^tool1-.*$", grammar, re.M) == re.findall(r"^tool1-.*$", plain, re.M)
    assert react_grammar([stats], schemas={"other": narrowed}) == react_grammar([stats])


def test_bind_react_grammar_passes_schemas_on() -> None:
    from langchain_openai import ChatOpenAI

    local = ChatOpenAI(
        model="m",
        api_key=SecretStr("k"),
        base_url="http://127.0.0.1:1/v1",
        metadata={PROVIDER_KEY: "local"},
    )
    narrowed = {"type": "object", "properties": {"user_id": {"const": 7}}, "required": ["user_id"]}
    bound = bind_react_grammar(local, [stats], schemas={"learning_stats": narrowed})
    assert isinstance(bound, RunnableBinding)
    expected = react_grammar([stats], schemas={"learning_stats": narrowed})
    assert bound.kwargs["extra_body"]["grammar"] == expected


class DaysArgs(BaseModel):
    days: int = Field(ge=1, le=30, description="How many days to look back.")


@pytest.mark.llm
def test_the_embedded_model_cannot_send_a_value_out_of_range(
    react_model: BaseChatModel,
) -> None:
    tool = _tool("look_back", DaysArgs)
    # the tool's own grammar, its root narrowed to the Action Input (the model's thought may
    # otherwise ramble to the token limit): the llama.cpp server decodes with it
    grammar = re.sub(r"^root ::= .*$", "root ::= tool0-args", react_grammar([tool]), flags=re.M)
    prompt = [
        ("system", "Answer with the JSON arguments of look_back(days)."),
        ("user", "Look back 1000000000000000 days."),
    ]
    extra = {**(getattr(react_model, "extra_body", None) or {}), "grammar": grammar}
    reply = react_model.bind(extra_body=extra).invoke(prompt)
    assert 1 <= DaysArgs.model_validate_json(reply.text).days <= 30


@pytest.mark.llm
def test_the_server_parses_the_grammar_of_every_domain_tool(
    react_model: BaseChatModel, tmp_path: Path
) -> None:
    from noema_graph.agents.domain_tools import domain_registry

    tools = domain_registry(tmp_path / "absent.sqlite").as_langchain_tools()
    short = make_model("local", max_tokens=24)  # the shared server of react_model
    reply = bind_react_grammar(short, tools).invoke("Say hi.")
    assert reply.text.startswith("Thought: ")  # llama.cpp refuses a grammar it cannot parse
