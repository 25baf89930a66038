"""Arguments the framework fills from the run, never the model.

LangChain marks such arguments ``InjectedToolArg`` (LangGraph's ``InjectedState`` and
``ToolRuntime`` are kinds of it): they are left out of the schema the model sees and the tool
node supplies them at call time. Noema's tools take JSON-schema arguments, where that marker
cannot live, so a tool declares them with :class:`InjectedArgs` (``ToolSpec.injected``, and
the LangChain tool's ``injected`` attribute). The model's schema, its grammar and
the argument binding never see them; ``tool_node`` drops whatever value a call gives them and
writes the run's own before the call runs (the recorded call shows the value it ran with).

The owner of a learner's rows is the example: ``user_id`` comes from the run's learner
(``--user``, ``RunContext(user_id=...)``, LangGraph's ``context`` or ``configurable``), so no
text in a request, and no argument the model writes, can point a tool at another learner.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool

Supplier = Callable[[str | None], Mapping[str, object]]
"""From the run's user (a learner's name or id as text; None: the run names nobody) to the
injected values. Raises ``ToolFailure`` when the run cannot supply them (no learner)."""


@dataclass(frozen=True)
class InjectedArgs:
    """The arguments of a tool the framework fills, and where their values come from.

    Attributes:
        fields: The argument names (left out of the model's schema).
        supply: Returns their values for the run's user (see :data:`Supplier`).
    """

    fields: frozenset[str]
    supply: Supplier


def injected_of(tool: BaseTool) -> InjectedArgs | None:
    """Return the injected arguments ``tool`` declares, or None."""
    found = getattr(tool, "injected", None)
    return found if isinstance(found, InjectedArgs) else None


def without(args: Mapping[str, object], fields: Collection[str]) -> dict[str, object]:
    """Return ``args`` without ``fields`` (a value the model wrote for them is dropped)."""
    return {key: value for key, value in args.items() if key not in fields}


def hide_fields(schema: Mapping[str, Any], fields: Collection[str]) -> dict[str, object]:
    """Return the object ``schema`` without the properties ``fields`` (what the model sees)."""
    if not fields:
        return dict(schema)
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = [name for name in schema.get("required") or () if name not in fields]
    out: dict[str, object] = {**schema, "properties": without(properties, fields)}
    if "required" in schema:
        out["required"] = required
    return out
