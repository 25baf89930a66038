"""One boundary for model messages: whatever a provider returns becomes a message we can keep.

A chat model may return anything: tool calls without ids or with the same id twice, names
that are not text, arguments that are a list or a JSON string, usage counts that are words or
negative, content that is neither text nor blocks, values msgpack cannot write (integers past
64 bits, arbitrary objects, lone UTF-16 surrogates). :func:`normalize_message` turns any
response into an :class:`~langchain_core.messages.AIMessage` that the graph, the tools, the
token counter and the checkpointer all accept, and lists what it repaired; the caller logs it.

* tool call ids: missing, not text, empty, repeated in the message or used by an earlier
  message of the thread -> a fresh unique id;
* tool call names: kept, as text (an unknown name is answered by the tool node);
* tool call arguments: a mapping is kept (made plain); a JSON string of an object is parsed;
  anything else becomes ``{INVALID_ARGUMENTS: why}``, which the tool node answers with an
  error observation (see :func:`invalid_arguments`); LangChain's ``invalid_tool_calls`` are
  moved among the tool calls the same way, so every call the model made gets an answer;
* usage metadata: counts coerced to non-negative integers, or dropped (:func:`normalize_usage`);
* content: text stays text; blocks stay blocks made plain; anything else is rendered as text;
* every other value: made plain by :func:`~noema_graph.models.plain.plain` (JSON-like,
  64-bit integers, valid UTF-8).

A message that needs no repair is returned as it is (the same object).
"""

from __future__ import annotations

import json
import math
import operator
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolCall, UsageMetadata
from langchain_core.messages.tool import tool_call
from pydantic import ValidationError

from noema_graph.models.plain import clean_text, plain_with_repairs, safe_repr, safe_str

MAX_NAME_CHARS = 256
"""Characters of a tool call name kept."""
MAX_TOKENS = 100_000_000
"""Largest token count believed for one call; a larger count is dropped as garbage."""
TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")
DETAIL_KEYS = ("input_token_details", "output_token_details")
INVALID_ARGUMENTS = "__invalid_arguments__"
"""Key of the arguments of a call whose arguments were unusable; its value says why."""
_RAW_CALL_KEYS = ("tool_calls", "function_call")
"""Provider-format calls in ``additional_kwargs``; the parsed ``tool_calls`` replace them."""


def _plain_with(value: object, repairs: list[str], what: str) -> object:
    made, changed = plain_with_repairs(value)
    repairs.extend(f"{what}: {r}" for r in changed)
    return made


def _plain_dict(value: Mapping[object, object], repairs: list[str], what: str) -> dict[str, Any]:
    """Return :func:`_plain_with` of a mapping: always a dict with text keys."""
    return cast(dict[str, Any], _plain_with(value, repairs, what))


# --- usage metadata -------------------------------------------------------------------------


def _count(value: object) -> int | None:
    """Return ``value`` as a token count, or None when it is not a believable one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value) if 0 <= value <= MAX_TOKENS else None  # no float(): 10**400 overflows
    number: float | None = None
    if isinstance(value, float) or (isinstance(value, Decimal) and value.is_finite()):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip()) if value.strip() else None
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not 0 <= number <= MAX_TOKENS:
        return None
    return round(number)


def normalize_usage(meta: object) -> tuple[dict[str, Any] | None, list[str]]:
    """Return LangChain ``UsageMetadata`` made of believable counts, and what was repaired.

    Each count must be a non-negative number up to :data:`MAX_TOKENS` (numeric text is
    read); any other count is dropped (0). ``total_tokens`` is at least input + output.
    Anything that is not a mapping is dropped (None).
    """
    if meta is None:
        return None, []
    if not isinstance(meta, Mapping):
        return None, [f"usage metadata {type(meta).__name__} is not a mapping: dropped"]
    repairs: list[str] = []
    counts: dict[str, int] = {}
    for key in TOKEN_KEYS:
        if key not in meta:
            continue
        count = _count(meta[key])
        if count is None:
            repairs.append(f"usage {key}={safe_repr(meta[key])[:40]} is not a count: dropped")
        else:
            counts[key] = count
    usage: dict[str, Any] = {
        "input_tokens": counts.get("input_tokens", 0),
        "output_tokens": counts.get("output_tokens", 0),
    }
    least = usage["input_tokens"] + usage["output_tokens"]
    usage["total_tokens"] = max(counts.get("total_tokens", least), least)
    for key in DETAIL_KEYS:
        details = meta.get(key)
        if isinstance(details, Mapping):
            given = cast(Mapping[Any, Any], details)
            kept = {
                safe_str(name): count
                for name, raw in given.items()
                if (count := _count(raw)) is not None
            }
            usage[key] = kept
            if len(kept) != len(given):
                repairs.append(f"usage {key}: counts that are not counts were dropped")
        elif details is not None:
            repairs.append(f"usage {key} is not a mapping: dropped")
    return usage, repairs


# --- tool calls -----------------------------------------------------------------------------


def _fresh_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _arguments(raw: object, repairs: list[str], name: str) -> dict[str, Any]:
    """Return a call's arguments as a plain dict, or an :data:`INVALID_ARGUMENTS` dict."""
    if raw is None:
        repairs.append(f"call {name!r}: no arguments, {{}} used")
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError) as exc:
            return {INVALID_ARGUMENTS: f"are not valid JSON ({safe_str(exc)[:120]})"}
        repairs.append(f"call {name!r}: arguments given as a JSON string were parsed")
    if isinstance(raw, Mapping):
        return _plain_dict(cast(Mapping[Any, Any], raw), repairs, f"call {name!r} arguments")
    return {
        INVALID_ARGUMENTS: f"must be a JSON object naming each argument, not {_kind(raw)} "
        f"({safe_repr(raw)[:120]})"
    }


def _kind(value: object) -> str:
    """Return what ``value`` is, in JSON words: 'an array', 'a number', 'text'..."""
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return f"a {type(value).__name__}"


def _call(item: object, seen: _Taken, repairs: list[str]) -> ToolCall:
    """Return one tool call with a text name, a unique text id and dict arguments."""
    if not isinstance(item, Mapping):
        repairs.append(f"a tool call that is a {type(item).__name__} became an invalid call")
        item = {"name": "", "args": [item]}
    raw_name = item.get("name")
    name = clean_text(raw_name) if isinstance(raw_name, str) else safe_str(raw_name or "")
    if not isinstance(raw_name, str) or len(name) > MAX_NAME_CHARS:
        repairs.append(f"tool call name {safe_repr(raw_name)[:60]} made text")
        name = name[:MAX_NAME_CHARS]
    raw_id = item.get("id")
    call_id = clean_text(raw_id) if isinstance(raw_id, str) else ""
    if not call_id or call_id in seen:
        repairs.append(f"tool call id {safe_repr(raw_id)[:60]} replaced")
        call_id = _fresh_id()
    seen.add(call_id)
    raw_args, error = item.get("args"), item.get("error")
    if raw_args is None and error:  # an InvalidToolCall with nothing left to read
        args: dict[str, Any] = {INVALID_ARGUMENTS: f"could not be read: {safe_str(error)[:200]}"}
    else:
        args = _arguments(raw_args, repairs, name)
    return tool_call(name=name, args=args, id=call_id)


def _as_list(value: object, what: str, repairs: list[str]) -> list[object]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(cast(Sequence[Any], value))
    repairs.append(f"{what} {type(value).__name__} is not a list: dropped")
    return []


def normalize_calls(
    message: AIMessage, used: Collection[str] = ()
) -> tuple[list[ToolCall], list[str]]:
    """Return every call of ``message`` (invalid ones included) well-formed, and the repairs.

    An id among ``used`` (the thread's earlier calls) is replaced too: a tool-ledger key
    then names one call.
    """
    repairs: list[str] = []
    items = _as_list(getattr(message, "tool_calls", None), "tool_calls", repairs)
    invalid = _as_list(getattr(message, "invalid_tool_calls", None), "invalid calls", repairs)
    if invalid:
        repairs.append(f"{len(invalid)} invalid tool call(s) kept, to be answered with an error")
    seen = _Taken(used)
    return [_call(item, seen, repairs) for item in [*items, *invalid]], repairs


class _Taken:
    """Call ids taken: the thread's earlier ones (read, never copied) and this message's."""

    __slots__ = ("new", "used")

    def __init__(self, used: Collection[str]) -> None:
        self.used, self.new = used, set[str]()

    def __contains__(self, call_id: str) -> bool:
        return call_id in self.new or call_id in self.used

    def add(self, call_id: str) -> None:
        self.new.add(call_id)


def invalid_arguments(call: Mapping[str, object]) -> str | None:
    """Return why the call's arguments were unusable (see :data:`INVALID_ARGUMENTS`), or None."""
    args = call.get("args")
    if not isinstance(args, Mapping):
        return f"must be a JSON object naming each argument, not {_kind(args)}"
    reason = cast(Mapping[str, Any], args).get(INVALID_ARGUMENTS)
    return None if reason is None else safe_str(reason)


# --- content --------------------------------------------------------------------------------


def _text_of(value: object, repairs: list[str]) -> str:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bytes | bytearray):
        return clean_text(bytes(value).decode("utf-8", "replace"))
    if value is None:
        return ""
    return json.dumps(_plain_with(value, repairs, "content"), ensure_ascii=False)


def _block(block: object, repairs: list[str]) -> str | dict[str, Any]:
    if isinstance(block, str):
        return clean_text(block)
    if isinstance(block, Mapping) and isinstance(block.get("type"), str):
        made = _plain_dict(cast(Mapping[Any, Any], block), repairs, "content block")
        if made.get("type") == "text" and not isinstance(made.get("text"), str):
            repairs.append("a text block whose text was not text was rendered")
            made = {**made, "text": _text_of(made.get("text"), repairs)}
        return made
    repairs.append(f"a content block {type(block).__name__} was rendered as text")
    return _text_of(block, repairs)


def normalize_content(content: object) -> tuple[str | list[str | dict[str, Any]], list[str]]:
    """Return ``content`` as text or a list of text and plain block dicts, and the repairs."""
    repairs: list[str] = []
    if isinstance(content, str):
        text = clean_text(content)  # the same object when nothing changed
        if text is not content and text != content:
            repairs.append("content with lone surrogates was repaired")
        return text, repairs
    if isinstance(content, list | tuple):
        items = cast(Sequence[object], content)
        blocks = [_block(b, repairs) for b in items]
        if type(items) is list and not repairs and all(map(operator.is_, blocks, items)):
            return cast(list[str | dict[str, Any]], items), repairs
        return blocks, repairs
    if isinstance(content, Mapping):
        repairs.append("content that is a mapping became one block")
        return [_block(content, repairs)], repairs
    repairs.append(f"content {type(content).__name__} was rendered as text")
    return _text_of(content, repairs), repairs


# --- the message ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Normalized:
    """A model message fit for state, and what had to be repaired (empty: nothing)."""

    message: AIMessage
    repairs: tuple[str, ...] = ()


def _metadata(value: object, what: str, repairs: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        repairs.append(f"{what} {type(value).__name__} is not a mapping: dropped")
        return {}
    return _plain_dict(cast(Mapping[Any, Any], value), repairs, what)


def _without_raw_calls(extra: dict[str, Any], repairs: list[str]) -> dict[str, Any]:
    """Drop provider-format calls that no parsed call stands for (they would go unanswered)."""
    if not any(k in extra for k in _RAW_CALL_KEYS):
        return extra
    repairs.append("provider-format tool calls without parsed calls were dropped")
    return {k: v for k, v in extra.items() if k not in _RAW_CALL_KEYS}


def _as_message(response: object) -> tuple[AIMessage | None, str | None]:
    """Return ``response`` if it is an AIMessage, else None and what it was."""
    if type(response) is AIMessage:
        return response, None
    if isinstance(response, AIMessage):  # a chunk or a subclass: rebuilt as an AIMessage
        return response, f"a {type(response).__name__} became an AIMessage"
    return None, f"a {type(response).__name__} response became an AIMessage"


def normalize_message(response: object, used: Collection[str] = ()) -> Normalized:
    """Return ``response`` as an AIMessage fit for state and the checkpointer (see module doc).

    ``used``: tool-call ids of the thread's earlier messages; a call reusing one is renamed.

    Never raises for any value of ``response``; a response that is not a message becomes
    the content of one.
    """
    message, changed = _as_message(response)
    if message is None:
        content = response.content if isinstance(response, BaseMessage) else response
        made, repairs = normalize_content(content)
        return Normalized(AIMessage(content=made), (changed or "", *repairs))
    repairs = [changed] if changed else []
    content, content_repairs = normalize_content(getattr(message, "content", ""))
    calls, call_repairs = normalize_calls(message, used)
    usage, usage_repairs = normalize_usage(getattr(message, "usage_metadata", None))
    repairs += [*content_repairs, *call_repairs, *usage_repairs]
    extra = _metadata(getattr(message, "additional_kwargs", None), "additional_kwargs", repairs)
    if not calls:
        extra = _without_raw_calls(extra, repairs)
    meta = _metadata(getattr(message, "response_metadata", None), "response_metadata", repairs)
    if not repairs and _unchanged(message, content, calls, usage, extra, meta):
        return Normalized(message)
    return Normalized(
        _rebuild(message, content, calls, usage, extra, meta, repairs),
        tuple(repairs) or ("the message was rebuilt",),
    )


def _unchanged(
    message: AIMessage,
    content: object,
    calls: list[ToolCall],
    usage: dict[str, Any] | None,
    extra: dict[str, Any],
    meta: dict[str, Any],
) -> bool:
    """Return True when the normalised fields are the message's own."""
    return (
        content is message.content
        and calls == message.tool_calls
        and not message.invalid_tool_calls
        and usage == message.usage_metadata
        and extra is message.additional_kwargs
        and meta is message.response_metadata
        and isinstance(getattr(message, "id", None), str | None)  # model_construct: any value
        and isinstance(getattr(message, "name", None), str | None)
    )


def _rebuild(
    message: AIMessage,
    content: str | list[str | dict[str, Any]],
    calls: list[ToolCall],
    usage: dict[str, Any] | None,
    extra: dict[str, Any],
    meta: dict[str, Any],
    repairs: list[str],
) -> AIMessage:
    """Return a validated AIMessage of the normalised fields."""
    raw_id, name = getattr(message, "id", None), getattr(message, "name", None)
    try:
        return AIMessage(
            content=content,
            tool_calls=calls,
            usage_metadata=cast(UsageMetadata | None, usage),  # counts checked above
            additional_kwargs=extra,
            response_metadata=meta,
            id=clean_text(raw_id) if isinstance(raw_id, str) else None,
            name=clean_text(name) if isinstance(name, str) else None,
        )
    except (ValidationError, TypeError, ValueError) as exc:  # not expected: keep the text
        repairs.append(f"the message could not be rebuilt ({safe_str(exc)[:200]}): text kept")
        return AIMessage(content=_text_of(content, repairs), tool_calls=calls)
