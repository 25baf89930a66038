"""The model-message boundary: every malformed field is repaired, a sound message is kept."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from noema_graph.models.normalize import (
    INVALID_ARGUMENTS,
    MAX_NAME_CHARS,
    invalid_arguments,
    normalize_message,
    normalize_usage,
)
from noema_graph.models.plain import CIRCULAR, TOO_DEEP, plain, plain_model
from noema_graph.persistence import serializer
from noema_graph.state.models import PlanDraft


def built(**fields: Any) -> AIMessage:
    """An AIMessage made without validation, as a careless provider may make one."""
    return AIMessage.model_construct(**{"content": "", **fields})


def calls_of(**fields: Any) -> list[dict[str, Any]]:
    return normalize_message(built(**fields)).message.tool_calls  # type: ignore[return-value]


def roundtrip(message: AIMessage) -> AIMessage:
    """Write and read ``message`` with the checkpointer's serializer."""
    serde = serializer()
    return serde.loads_typed(serde.dumps_typed(message))


def test_a_sound_message_is_returned_as_it_is() -> None:
    message = AIMessage(
        content="thinking",
        tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1"}],
        usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
        response_metadata={"model_name": "m"},
    )
    normalized = normalize_message(message)
    assert normalized.message is message and normalized.repairs == ()


@pytest.mark.parametrize("bad", [None, 7, ["x"], ""])
def test_an_unusable_call_id_gets_a_fresh_unique_one(bad: object) -> None:
    (call,) = calls_of(tool_calls=[{"name": "add", "args": {}, "id": bad}])
    assert isinstance(call["id"], str) and call["id"].startswith("call_")


def test_repeated_and_missing_ids_become_unique() -> None:
    calls = calls_of(
        tool_calls=[
            {"name": "add", "args": {}, "id": "dup"},
            {"name": "add", "args": {}, "id": "dup"},
            {"name": "add", "args": {}},
            {"name": "add", "args": {}},
        ]
    )
    ids = [c["id"] for c in calls]
    assert ids[0] == "dup" and len(set(ids)) == 4


def test_an_id_the_thread_used_is_replaced_and_the_thread_ids_are_left_as_they_are() -> None:
    used = frozenset({"c1"})  # read-only: normalisation never copies nor changes it
    message = AIMessage(
        "",
        tool_calls=[
            {"name": "add", "args": {}, "id": "c1"},
            {"name": "add", "args": {}, "id": "c2"},
            {"name": "add", "args": {}, "id": "c2"},
        ],
    )
    ids = [c["id"] for c in normalize_message(message, used).message.tool_calls]
    assert ids[0] != "c1" and ids[1] == "c2" and ids[2] not in {"c1", "c2"}
    assert len(set(ids)) == 3 and used == {"c1"}


@pytest.mark.parametrize(
    ("name", "expected"), [(None, ""), (5, "5"), ([1, 2], "[1, 2]"), ("add", "add")]
)
def test_a_call_name_is_kept_as_text(name: object, expected: str) -> None:
    (call,) = calls_of(tool_calls=[{"name": name, "args": {}, "id": "c"}])
    assert call["name"] == expected


def test_a_giant_name_is_cut() -> None:
    (call,) = calls_of(tool_calls=[{"name": "x" * 10_000, "args": {}, "id": "c"}])
    assert len(call["name"]) == MAX_NAME_CHARS


def test_arguments_in_a_json_string_are_parsed() -> None:
    (call,) = calls_of(tool_calls=[{"name": "add", "args": '{"a": 1, "b": 2}', "id": "c"}])
    assert call["args"] == {"a": 1, "b": 2} and invalid_arguments(call) is None


@pytest.mark.parametrize(
    ("args", "why"),
    [
        ([1, 2], "not an array ([1, 2])"),
        ("{'a': 1", "are not valid JSON"),
        ("[1, 2]", "not an array"),
        (42, "not a number (42)"),
        (object(), "not a object"),
    ],
)
def test_unusable_arguments_are_marked_with_why(args: object, why: str) -> None:
    (call,) = calls_of(tool_calls=[{"name": "add", "args": args, "id": "c"}])
    assert set(call["args"]) == {INVALID_ARGUMENTS}
    problem = invalid_arguments(call)
    assert problem is not None and why in problem


def test_missing_arguments_are_an_empty_object() -> None:
    (call,) = calls_of(tool_calls=[{"name": "add", "id": "c"}])
    assert call["args"] == {} and invalid_arguments(call) is None


def test_a_call_that_is_not_a_mapping_is_answered_as_invalid() -> None:
    (call,) = calls_of(tool_calls=["add(1, 2)"])
    assert call["name"] == "" and invalid_arguments(call) is not None


def test_invalid_tool_calls_join_the_calls_so_each_is_answered() -> None:
    message = AIMessage(
        content="",
        tool_calls=[{"name": "add", "args": {"a": 1}, "id": "ok"}],
        invalid_tool_calls=[
            {"name": "add", "args": '{"a": ', "id": "bad", "error": "Expecting value"}
        ],
    )
    normalized = normalize_message(message).message
    assert [c["id"] for c in normalized.tool_calls] == ["ok", "bad"]
    assert normalized.invalid_tool_calls == []
    problem = invalid_arguments(normalized.tool_calls[1])
    assert problem is not None and "not valid JSON" in problem


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (
            {"input_tokens": "12", "output_tokens": 3.0, "total_tokens": 15},
            {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
        ),
        (
            {"input_tokens": "lots", "output_tokens": -4, "total_tokens": 2**70},
            {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        ),
        (
            {"input_tokens": 10**400, "output_tokens": -(10**400), "total_tokens": "1e999"},
            {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        ),
        (
            {"input_tokens": math.nan, "output_tokens": True, "total_tokens": None},
            {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
        ),
        (
            {"input_tokens": 10, "output_tokens": 5, "total_tokens": 1},
            {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        ),
    ],
)
def test_usage_counts_are_coerced_or_dropped(meta: dict[str, Any], expected: Any) -> None:
    usage, _ = normalize_usage(meta)
    assert usage == expected


def test_usage_that_is_not_a_mapping_is_dropped_with_a_reason() -> None:
    usage, repairs = normalize_usage([1, 2])
    assert usage is None and "not a mapping" in repairs[0]


def test_usage_details_keep_only_counts() -> None:
    usage, repairs = normalize_usage(
        {"input_tokens": 1, "input_token_details": {"cache_read": 1, "audio": "x"}}
    )
    assert usage is not None and usage["input_token_details"] == {"cache_read": 1}
    assert repairs


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, ""),
        (42, "42"),
        ({"type": "text", "text": "hi"}, [{"type": "text", "text": "hi"}]),
        (["a", {"type": "text", "text": 5}], ["a", {"type": "text", "text": "5"}]),
        ([{"no": "type"}], ['{"no": "type"}']),
        ("bad \ud800 text", "bad \ufffd text"),
    ],
)
def test_content_of_any_shape_becomes_text_or_blocks(content: object, expected: Any) -> None:
    message = normalize_message(built(content=content)).message
    assert message.content == expected
    assert isinstance(message.text, str)


def test_a_response_that_is_not_an_ai_message_becomes_one() -> None:
    assert normalize_message("plain text").message.content == "plain text"
    assert normalize_message(HumanMessage("hi")).message.content == "hi"
    chunk = normalize_message(AIMessageChunk(content="part"))
    assert type(chunk.message) is AIMessage and chunk.repairs


def test_plain_makes_every_value_writable() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    deep: Any = "bottom"
    for _ in range(100):
        deep = [deep]
    value = {
        1: 2**70,
        "set": {3},
        "bytes": b"\xff",
        "decimal": Decimal("1.5"),
        "object": object(),
        "loop": loop,
        "deep": deep,
        "nan": math.nan,
        "message": AIMessage(content="inside"),
    }
    made: Any = plain(value)
    assert made["1"] == str(2**70) and made["set"] == [3]
    assert made["bytes"] == "\ufffd" and made["decimal"] == 1.5
    assert made["object"].startswith("<object object")
    assert made["loop"]["self"] == CIRCULAR
    assert TOO_DEEP in str(made["deep"])
    assert math.isnan(made["nan"]) and made["message"]["content"] == "inside"
    serializer().dumps_typed(made)  # the checkpointer can write it


def test_plain_returns_a_plain_value_itself() -> None:
    value = {"a": [1, "two", None, 3.5], "b": {"c": True}}
    assert plain(value) is value


def test_a_repaired_message_survives_the_checkpointer() -> None:
    message = built(
        content=[{"type": "text", "text": "\udc80"}, object()],
        tool_calls=[{"name": 3, "args": {"n": 2**80, "m": {1, 2}}, "id": None}],
        usage_metadata={"input_tokens": "x"},
        additional_kwargs={"obj": object()},
        response_metadata={"big": -(2**65)},
    )
    normalized = normalize_message(message)
    assert normalized.repairs
    restored = roundtrip(normalized.message)
    assert restored.tool_calls[0]["args"] == {"n": str(2**80), "m": [1, 2]}
    assert restored.response_metadata == {"big": str(-(2**65))}


def test_plain_model_repairs_text_or_gives_up() -> None:
    draft = PlanDraft.model_construct(goal="bad \ud800", steps=["one"])
    repaired = plain_model(draft)
    assert repaired is not None and repaired.goal == "bad \ufffd"
    sound = PlanDraft(goal="fine", steps=["one"])
    assert plain_model(sound) is sound
