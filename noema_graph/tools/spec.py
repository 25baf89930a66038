"""What a tool is (:class:`ToolSpec`) and what a call may use (:class:`ToolContext`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from noema_graph.config import Permission
from noema_graph.errors import ConfigurationError
from noema_graph.tools.injection import InjectedArgs, hide_fields

Idempotency = Literal["safe", "idempotent", "non_idempotent"]
"""``safe``: no side effects; ``idempotent``: repeating has the same effect as once;
``non_idempotent``: never repeated automatically."""

Handler = Callable[..., Any]
"""Sync or async callable taking the validated arguments as keywords (plus ``context``)."""


@dataclass(frozen=True)
class ToolContext:
    """Run-scoped limits a tool call executes under.

    Attributes:
        permissions: Permissions granted to this run.
        working_directory: Sandbox root for file, shell and code tools.
        timeout_s: Per-call timeout (a tool's own ``timeout_s`` wins when smaller).
    """

    permissions: frozenset[Permission] = frozenset()
    working_directory: Path = field(default_factory=Path.cwd)
    timeout_s: float = 60.0


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool.

    Attributes:
        name: Unique name the model calls it by.
        description: What the tool does, for the model.
        input_schema: A pydantic model of the arguments, or a JSON Schema object.
        handler: Sync or async callable; receives the validated arguments as keyword
            arguments, and the :class:`ToolContext` as ``context`` when it declares that
            parameter. It returns a dict, a pydantic model, a :class:`ToolResult` or any
            JSON value, and reports expected failures by raising ``ToolFailure``.
        permission: Permission the call needs, or None.
        idempotency: Whether the runner may repeat the call on a transient error.
        timeout_s: Optional per-tool timeout; the smaller of it and the context's applies.
        injected: Arguments the framework fills from the run (the learner's ``user_id``),
            left out of the schema the model sees; see :mod:`noema_graph.tools.injection`.
    """

    name: str
    description: str
    input_schema: type[BaseModel] | dict[str, object]
    handler: Handler
    permission: Permission | None = None
    idempotency: Idempotency = "non_idempotent"
    timeout_s: float | None = None
    injected: InjectedArgs | None = None

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "_").isidentifier():
            raise ConfigurationError(
                "ToolSpec.name",
                f"{self.name!r} is not a valid tool name",
                fix="use letters, digits, '_' or '-' (what chat model APIs accept)",
            )
        if not callable(self.handler):
            raise ConfigurationError("ToolSpec.handler", f"{self.handler!r} is not callable")

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function."""
        return inspect.iscoroutinefunction(self.handler)

    @property
    def wants_context(self) -> bool:
        """Whether the handler declares a ``context`` parameter."""
        return "context" in inspect.signature(self.handler).parameters

    def json_schema(self) -> dict[str, object]:
        """Return the arguments' JSON Schema as the model sees it: no injected argument."""
        hidden = self.injected.fields if self.injected is not None else frozenset[str]()
        return hide_fields(self.full_json_schema(), hidden) if hidden else self.full_json_schema()

    def full_json_schema(self) -> dict[str, object]:
        """Return the JSON Schema of every argument, the injected ones included."""
        if isinstance(self.input_schema, dict):
            return self.input_schema
        return self.input_schema.model_json_schema()
