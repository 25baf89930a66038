"""JSON-schema argument schemas of LangChain tools: build-time checks and cached validators.

A tool's ``args_schema`` is either a pydantic model or a JSON-schema dict (MCP tools, tools
built from JSON schemas). :func:`check_tool_schemas` refuses a schema that cannot describe a
tool's arguments when the agent is built, naming the tool, instead of letting it degrade
silently later. :func:`compiled_schema` keeps one compiled validator per tool, so a call's
arguments are checked without rebuilding it (see :mod:`noema_graph.tools.validation`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import jsonschema
import jsonschema.protocols
import jsonschema.validators
from langchain_core.tools import BaseTool
from pydantic import BaseModel, PydanticUserError

from noema_graph.errors import ConfigurationError

SCHEMA_FIX = (
    "give the tool a JSON Schema of type 'object' whose 'properties' describe each argument "
    "(https://json-schema.org/understanding-json-schema), or a pydantic model"
)
"""The fix named by the error an invalid tool schema raises."""


@dataclass(frozen=True)
class CompiledSchema:
    """What one tool's argument schema compiles to.

    Attributes:
        source: The ``args_schema`` object it was compiled from (a reassigned schema is
            compiled again).
        problem: Why the schema cannot describe the tool's arguments, or None.
        validator: The JSON-schema validator of a valid dict schema, else None.
        model: The pydantic model the model-facing arguments validate against (the tool
            call schema, without injected arguments), else None.
    """

    source: object
    problem: str | None
    validator: jsonschema.protocols.Validator | None = None
    model: type[BaseModel] | None = None


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are data, not schemas: a ``$ref`` key inside them is not a reference."""

_COMPILED: dict[int, CompiledSchema] = {}
_LOCK = threading.Lock()


def compiled_schema(tool: BaseTool) -> CompiledSchema:
    """Return ``tool``'s compiled argument schema, compiling it on first use.

    The result is cached per tool object (dropped when the tool is garbage collected) and
    compiled again when ``tool.args_schema`` is reassigned.
    """
    source: object = tool.args_schema
    cached = _COMPILED.get(id(tool))
    if cached is not None and cached.source is source:
        return cached
    compiled = _compile(tool)
    with _LOCK:
        if id(tool) not in _COMPILED:
            weakref.finalize(tool, _COMPILED.pop, id(tool), None)
        _COMPILED[id(tool)] = compiled
    return compiled


def _compile(tool: BaseTool) -> CompiledSchema:
    schema = tool.args_schema
    if isinstance(schema, dict):
        problem = json_schema_problem(schema)
        if problem is not None:
            return CompiledSchema(schema, problem)
        validator_class = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
        return CompiledSchema(schema, None, validator=validator_class(schema))
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model = tool.tool_call_schema
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return CompiledSchema(schema, None)
        try:
            model.model_json_schema()
        except PydanticUserError as exc:
            return CompiledSchema(schema, f"it has no JSON Schema: {exc}")
        return CompiledSchema(schema, None, model=model)
    return CompiledSchema(schema, None)  # no schema, or a pydantic.v1 model: not checked


def json_schema_problem(schema: Mapping[str, object]) -> str | None:
    """Return why ``schema`` cannot describe a tool's arguments, or None when it can.

    The schema must be valid under its own ``$schema`` draft (2020-12 by default), be of
    type ``object`` when it names a type, and every local ``$ref`` must resolve.
    """
    validator_class = jsonschema.validators.validator_for(
        schema, default=jsonschema.Draft202012Validator
    )
    try:
        validator_class.check_schema(dict(schema))
    except jsonschema.SchemaError as exc:
        return f"{exc.message} (at {_pointer(exc.absolute_path)})"
    kind = schema.get("type", "object")
    if kind != "object":
        return f"the arguments must be an object, but the schema's type is {kind!r}"
    for where, ref in _local_refs(schema, ()):
        if resolve_pointer(schema, ref) is None:
            return f"$ref {ref!r} does not resolve (at {_pointer(where)})"
    return None


def check_tool_schemas(tools: Sequence[BaseTool]) -> None:
    """Raise when one of ``tools`` has an argument schema that cannot describe its arguments.

    Raises:
        ConfigurationError: for the first such tool, naming it and the problem.
    """
    for tool in tools:
        problem = compiled_schema(tool).problem
        if problem is not None:
            raise ConfigurationError(
                "tools",
                f"tool {tool.name!r} has an invalid argument schema: {problem}",
                fix=SCHEMA_FIX,
            )


def resolve_pointer(schema: Mapping[str, object], ref: str) -> object:
    """Return the part of ``schema`` a local ``$ref`` (``#`` or ``#/a/b``) names, or None."""
    if ref == "#":
        return schema
    node: object = schema
    for raw in ref.removeprefix("#/").split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _local_refs(
    node: object, where: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Yield (location, ref) for every ``$ref`` to this document (``#...``) under ``node``."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#"):
                yield where, value
            elif key not in _DATA_KEYWORDS:
                yield from _local_refs(value, (*where, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _local_refs(value, (*where, index))


def _pointer(path: Iterable[object]) -> str:
    parts = [str(part) for part in path]
    return "/".join(parts) if parts else "<root>"
