"""The ten Noema agents (seed 000) as :class:`AgentDefinition` objects, read from catalog.toml.

The TOML file holds the data (one table per agent); this module turns each table into an
:class:`AgentDefinition`, which validates every field, so a mistake in the file fails at
import with a :class:`~noema_graph.errors.ConfigurationError` naming the agent and field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from noema_graph.agents import schemas
from noema_graph.agents.definition import AgentDefinition, AgentLimits
from noema_graph.errors import ConfigurationError

LIMITS: dict[str, AgentLimits] = {
    # A run that ends exactly on max_iterations is finalized without the structured answer,
    # so the limits leave headroom over the few iterations each agent needs.
    "quick": AgentLimits(max_iterations=5, reflection_interval=4, max_replans=1, timeout_s=180),
    "work": AgentLimits(max_iterations=6, reflection_interval=3, max_replans=2, timeout_s=300),
    # One tool call answers the request: after its result the agent answers (no second
    # call, no periodic reflection); a failed call may be retried.
    "one_call": AgentLimits(
        max_iterations=5,
        reflection_interval=5,
        max_replans=1,
        timeout_s=120,
        answer_after_tool_results=1,
    ),
}
"""The limit presets a catalog entry names in ``limits``."""


def _definition(name: str, fields: object) -> AgentDefinition:
    """Return the agent ``name`` described by one table of the catalog."""
    if not isinstance(fields, dict):
        raise ConfigurationError(
            f"catalog.{name}", f"expected a table, got {fields!r}", fix=f"write it as [{name}]"
        )
    entry: dict[str, Any] = dict(fields)
    schema: object = getattr(schemas, str(entry.pop("output_schema", "")), None)
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise ConfigurationError(
            f"catalog.{name}.output_schema",
            f"{fields.get('output_schema')!r} is not a model of agents/schemas.py",
            fix="name one of its classes, e.g. 'NextCard'",
        )
    preset = str(entry.pop("limits", ""))
    if preset not in LIMITS:
        raise ConfigurationError(
            f"catalog.{name}.limits", f"unknown preset {preset!r}", fix=f"use one of {list(LIMITS)}"
        )
    fixed = {"name": name, "output_schema": schema, "limits": LIMITS[preset]}
    return AgentDefinition(**{"prompt": name, **entry, **fixed})


def load_definitions(text: str) -> tuple[AgentDefinition, ...]:
    """Return the definitions of a TOML catalog (one table per agent), in file order.

    In a table, ``output_schema`` names a model of :mod:`noema_graph.agents.schemas` and
    ``limits`` a preset of :data:`LIMITS`; every other key is an :class:`AgentDefinition`
    field, and the prompt is the one named like the agent.

    Raises:
        ConfigurationError: An unknown schema or preset, or a field the definition rejects.
    """
    return tuple(_definition(name, fields) for name, fields in tomllib.loads(text).items())


DEFINITIONS: tuple[AgentDefinition, ...] = load_definitions(
    Path(__file__).with_name("catalog.toml").read_text(encoding="utf-8")
)
"""The ten agents, in the order of seed 000."""
