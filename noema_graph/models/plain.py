"""Plain values: what any checkpointer can write, made from whatever a model returned.

msgpack (LangGraph's checkpoint format) writes JSON-like data with 64-bit integers and UTF-8
text; a model's tool arguments or metadata may hold integers past 64 bits, lone UTF-16
surrogates (a JSON escape can make one), sets, bytes, arbitrary objects, circular or absurdly
deep structures. :func:`plain` turns any value into writable data, keeping a value
that is already plain as it is (the same object); :func:`safe_str` and :func:`safe_repr` give
text for any object, even one whose ``__str__`` raises.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The integers msgpack can write."""
MAX_DEPTH = 32
"""Nesting levels kept by :func:`plain`; deeper values become a marker string."""
MAX_NODES = 100_000
"""Values visited by one :func:`plain` call; past it, values become a marker string."""
TOO_DEEP = "[nested too deep]"
TOO_MANY = "[too many values]"
CIRCULAR = "[circular reference]"

M = TypeVar("M", bound=BaseModel)


def safe_str(value: object) -> str:
    """Return ``str(value)``; a ``__str__`` that raises gives the default ``object`` repr."""
    try:
        text = str(value)
    except Exception:  # foreign __str__ code may raise anything; we need text
        return object.__repr__(value)
    return clean_text(text)


def safe_repr(value: object) -> str:
    """Return ``repr(value)``; a ``__repr__`` that raises gives the default ``object`` repr."""
    try:
        text = repr(value)
    except Exception:  # foreign __repr__ code may raise anything
        return object.__repr__(value)
    return clean_text(text)


def clean_text(text: str) -> str:
    """Return ``text`` as a plain ``str`` that encodes to UTF-8 (lone surrogates -> U+FFFD)."""
    plain_text = str.__str__(text)  # a str subclass becomes a plain str
    if plain_text.isascii():
        return plain_text
    try:
        plain_text.encode("utf-8")
    except UnicodeEncodeError:  # pairs written as two surrogates join; lone ones are replaced
        return plain_text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return plain_text


def _int_text(value: int) -> str:
    try:
        return str(value)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return f"[integer of {value.bit_length()} bits]"


@dataclass
class _Walk:
    """One :func:`plain` pass: its budget, the containers on the current path, the repairs."""

    nodes: int = 0
    path: set[int] = field(default_factory=set[int])
    repairs: set[str] = field(default_factory=set[str])

    def value(self, value: object, depth: int) -> object:
        self.nodes += 1
        if type(value) is str and value.isascii():  # the common case first
            return value
        if value is None or isinstance(value, bool | float | int | str):
            return self._scalar(value)
        if depth >= MAX_DEPTH or self.nodes > MAX_NODES:
            self.repairs.add("values nested too deep or too many were cut")
            return TOO_DEEP if depth >= MAX_DEPTH else TOO_MANY
        kind = type(value)  # exact types before the Mapping ABC, which is slow to check
        if kind is dict or kind is list or isinstance(value, Mapping | tuple | set | frozenset):
            return self._container(cast(Any, value), depth)
        return self._other(value, depth)

    def _scalar(self, value: bool | float | str | None) -> object:
        if value is None or type(value) is bool or type(value) is float:
            return value
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, int):
            return self._int(value)
        return float(value)  # a float subclass (numpy.float64...) msgpack may refuse

    def _int(self, value: int) -> object:
        if type(value) is int and INT64_MIN <= value <= INT64_MAX:
            return value
        if INT64_MIN <= value <= INT64_MAX:
            return int(value)  # an int subclass (IntEnum...) becomes a plain int
        self.repairs.add("an integer beyond 64 bits became text")
        return _int_text(value)

    def _text(self, value: str) -> str:
        text = clean_text(value)
        if text is not value and text != value:
            self.repairs.add("text with lone surrogates was repaired")
        return text

    def _container(self, value: Any, depth: int) -> object:
        if id(value) in self.path:
            self.repairs.add("a circular reference was cut")
            return CIRCULAR
        self.path.add(id(value))
        try:
            if type(value) is dict or isinstance(value, Mapping):
                return self._mapping(cast(Mapping[Any, Any], value), depth)
            items = [self.value(item, depth + 1) for item in value]
        finally:
            self.path.discard(id(value))
        if type(value) is list and all(map(operator.is_, items, value)):
            return value
        if not isinstance(value, list | tuple):
            self.repairs.add("a set became a list")
        return items

    def _mapping(self, value: Mapping[object, object], depth: int) -> object:
        pairs = [(self.key(k), self.value(v, depth + 1)) for k, v in value.items()]
        unchanged = type(value) is dict and all(
            k is k2 and v is v2 for (k, v), (k2, v2) in zip(value.items(), pairs, strict=True)
        )
        return value if unchanged else dict(pairs)

    def key(self, key: object) -> str:
        """Return a mapping key as text."""
        if type(key) is str and key.isascii():
            return key
        if isinstance(key, str):
            return self._text(key)
        self.repairs.add("a mapping key that was not text became text")
        if isinstance(key, int) and not isinstance(key, bool):
            return _int_text(key)
        return json.dumps(key) if key is None or isinstance(key, bool | float) else safe_str(key)

    def _other(self, value: object, depth: int) -> object:
        self.repairs.add(f"a {type(value).__name__} value was made plain")
        if isinstance(value, bytes | bytearray | memoryview):
            return clean_text(bytes(value).decode("utf-8", "replace"))
        if isinstance(value, Decimal):
            return float(value) if value.is_finite() else str(value)
        try:
            jsonable = to_jsonable_python(value, fallback=safe_str)
        except (PydanticSerializationError, ValueError, TypeError, RecursionError):
            return safe_str(value)
        if jsonable is value:  # nothing pydantic could do: an opaque object
            return safe_str(value)
        return self.value(jsonable, depth + 1)


def plain(value: object) -> object:
    """Return ``value`` as JSON-like data that any checkpointer can write.

    Mappings get text keys; lists, tuples and sets become lists; integers outside 64 bits,
    bytes, decimals, dates and other objects become text (pydantic models and dataclasses
    become mappings first); lone surrogates are replaced; nesting past :data:`MAX_DEPTH`,
    more than :data:`MAX_NODES` values and circular references become marker strings. A
    value that is already plain is returned as it is.
    """
    return _Walk().value(value, 0)


def plain_with_repairs(value: object) -> tuple[object, list[str]]:
    """Return :func:`plain` of ``value`` and what had to be changed (empty: nothing)."""
    walk = _Walk()
    made = walk.value(value, 0)
    return made, sorted(walk.repairs)


def plain_model(value: M) -> M | None:
    """Return ``value`` with every field made plain, or None when that breaks its schema."""
    dumped = value.model_dump()
    cleaned = plain(dumped)
    if cleaned is dumped:
        return value
    try:
        return type(value).model_validate(cleaned)
    except ValidationError:
        return None
