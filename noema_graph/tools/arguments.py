"""Check a model's tool-call arguments against the tool's schema before the tool runs.

:func:`check_arguments` works for any LangChain tool. JSON-schema tools (MCP tools, tools
built from a JSON Schema) get no validation from LangChain at all, so they are validated here
with ``jsonschema``; pydantic tools are validated with their model, as LangChain will do on
invoke, to give the model the same clear observation naming the argument.

Coercion is lossless only: an int where the schema says ``number`` becomes a float, and a
string becomes a number only when the schema says ``number``/``integer`` (and not
``string``) and the whole string is a JSON number literal. Nothing else is ever changed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, cast

import jsonschema
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from noema_graph.schemas import compiled_schema, resolve_pointer

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_MAX_EXACT_INT = 2**53
"""Integers up to this magnitude are exactly representable as a float."""
_JSON_TYPES: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    tuple: "array",
    dict: "object",
    type(None): "null",
}
_PYDANTIC_EXPECTED = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "string_type": "string",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}


def check_arguments(tool: BaseTool, args: object) -> tuple[dict[str, object], str | None]:
    """Validate (and losslessly coerce) the arguments of one call of ``tool``.

    Args:
        tool: The tool the model called.
        args: The call's ``args`` as the model sent them.

    Returns:
        ``(arguments, None)`` when the call may run, the arguments possibly coerced; or
        ``(arguments, text)`` where ``text`` is the error observation for the model, naming
        each bad argument and what was expected, e.g. ``"Invalid argument 'x' for tool 'add':
        expected number, got 'abc'."``. Arguments that are not an object give ``({}, text)``.
        A tool whose schema is invalid refuses every call; tools without a schema (or with
        a pydantic.v1 one) are not checked.
    """
    if not isinstance(args, dict):
        return {}, (
            f"Invalid arguments for tool {tool.name!r}: expected an object of named "
            f"arguments, got {_described(args)}."
        )
    given: dict[str, object] = {str(key): value for key, value in args.items()}
    compiled = compiled_schema(tool)
    if compiled.problem is not None:  # check_tool_schemas refuses it at build time
        return given, f"Tool {tool.name!r} has an invalid argument schema: {compiled.problem}."
    schema = tool.args_schema
    if compiled.validator is not None and isinstance(schema, dict):
        coerced = cast(dict[str, Any], coerce_numbers(schema, given, schema))  # dict in, dict out
        errors = sorted(
            compiled.validator.iter_errors(coerced), key=lambda e: list(map(str, e.path))
        )
        if errors:
            texts = dict.fromkeys(_jsonschema_text(tool.name, error) for error in errors)
            return given, " ".join(texts)
        return coerced, None
    if compiled.model is not None:
        return _check_model(tool.name, compiled.model, given)
    return given, None


def coerce_numbers(
    schema: Mapping[str, object], value: object, root: Mapping[str, object]
) -> object:
    """Return ``value`` with lossless number coercions where ``schema`` asks for numbers.

    Walks ``properties`` of objects and ``items`` of arrays (following local ``$ref``s of
    ``root``); an int becomes a float where the schema says ``number`` but not ``integer``, a
    numeric string becomes a number where the schema admits a number but not a string.
    """
    schema = _resolved(schema, root)
    if isinstance(value, bool):
        return value
    kinds = _kinds(schema, root)
    if isinstance(value, int):
        exact = abs(value) <= _MAX_EXACT_INT
        return float(value) if exact and "number" in kinds and "integer" not in kinds else value
    if isinstance(value, str):
        return _parse_number(value, kinds)
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, Mapping):
        return {
            key: coerce_numbers(properties[key], item, root)
            if isinstance(properties.get(key), Mapping)
            else item
            for key, item in value.items()
        }
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [coerce_numbers(items, item, root) for item in value]
    return value


def _resolved(schema: Mapping[str, object], root: Mapping[str, object]) -> Mapping[str, object]:
    seen = 0
    while isinstance(ref := schema.get("$ref"), str) and ref.startswith("#") and seen < 32:
        target = resolve_pointer(root, ref)
        if not isinstance(target, Mapping):
            break
        schema, seen = target, seen + 1
    return schema


def _kinds(schema: Mapping[str, object], root: Mapping[str, object]) -> frozenset[str]:
    """Return the JSON types ``schema`` admits, from ``type`` and its anyOf/oneOf branches.

    An empty set means the types are not stated (anything goes), so nothing is coerced.
    """
    kinds: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(str(kind) for kind in declared)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if not isinstance(branches, list):
            continue
        for branch in branches:
            branch_kinds = (
                _kinds(_resolved(branch, root), root) if isinstance(branch, Mapping) else ()
            )
            if not branch_kinds:
                return frozenset()  # an untyped branch admits anything: do not guess
            kinds.update(branch_kinds)
    return frozenset(kinds)


def _parse_number(text: str, kinds: frozenset[str]) -> str | int | float:
    if "string" in kinds:
        return text
    if "integer" in kinds and _INTEGER.fullmatch(text):
        return int(text)
    if "number" in kinds and _NUMBER.fullmatch(text):
        if _INTEGER.fullmatch(text) and abs(int(text)) > _MAX_EXACT_INT:
            return int(text)  # a JSON parser keeps a big integer literal exact too
        number = float(text)
        return number if math.isfinite(number) else text
    return text


def _jsonschema_text(tool: str, error: jsonschema.ValidationError) -> str:
    path = _dotted(list(error.absolute_path))
    if error.validator == "required":
        missing = error.message.split("'")[1] if error.message.count("'") >= 2 else "?"
        name = f"{path}.{missing}" if path else missing
        return f"Missing argument {name!r} for tool {tool!r}."
    where = f"argument {path!r}" if path else "arguments"
    expected = _expected(error)
    if expected is not None:
        return (
            f"Invalid {where} for tool {tool!r}: expected {expected}, got {_short(error.instance)}."
        )
    return f"Invalid {where} for tool {tool!r}: {error.message}."


def _expected(error: jsonschema.ValidationError) -> str | None:
    """Return the expected JSON type(s) of a type or anyOf/oneOf-of-types error, else None."""
    if error.validator == "type":
        declared = error.validator_value
        return " or ".join(map(str, declared)) if isinstance(declared, list) else str(declared)
    if error.validator in ("anyOf", "oneOf") and isinstance(error.validator_value, list):
        kinds = [
            branch.get("type") if isinstance(branch, Mapping) else None
            for branch in error.validator_value
        ]
        if kinds and all(isinstance(kind, str) for kind in kinds):
            return " or ".join(dict.fromkeys(str(kind) for kind in kinds))
    return None


def _check_model(
    tool: str, model: type[BaseModel], given: dict[str, object]
) -> tuple[dict[str, object], str | None]:
    try:
        parsed = model.model_validate(given)
    except ValidationError as exc:
        texts = dict.fromkeys(_pydantic_text(tool, error) for error in exc.errors())
        return given, " ".join(texts)
    attributes = {(field.alias or name): name for name, field in type(parsed).model_fields.items()}
    coerced = dict(given)
    for key, value in given.items():
        if key in attributes:
            coerced[key] = _lossless(value, getattr(parsed, attributes[key]))
    return coerced, None


def _lossless(given: object, parsed: object) -> object:
    """Return ``parsed`` when it is a lossless number coercion of ``given``, else ``given``."""
    if isinstance(given, bool) or type(parsed) not in (int, float):
        return given
    if isinstance(given, int) and type(parsed) is float and parsed == given:
        return parsed
    if isinstance(given, str) and _NUMBER.fullmatch(given):
        return parsed
    return given


def _pydantic_text(tool: str, error: ErrorDetails) -> str:
    path = _dotted(list(error["loc"]))
    if error["type"] == "missing":
        return f"Missing argument {path!r} for tool {tool!r}."
    if error["type"] == "extra_forbidden":
        return f"Unexpected argument {path!r} for tool {tool!r}."
    where = f"argument {path!r}" if path else "arguments"
    expected = _PYDANTIC_EXPECTED.get(error["type"])
    got = _short(error.get("input"))
    if expected is not None:
        return f"Invalid {where} for tool {tool!r}: expected {expected}, got {got}."
    message = error["msg"][:1].lower() + error["msg"][1:]
    return f"Invalid {where} for tool {tool!r}: {message}, got {got}."


def _dotted(path: list[object]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _described(value: object) -> str:
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    return kind if value is None else f"{kind} {_short(value)}"


def _short(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
