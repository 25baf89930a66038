"""The agent registry: definitions by unique name, validated against their prompts."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from noema_graph.agents.catalog import DEFINITIONS
from noema_graph.agents.definition import AgentDefinition
from noema_graph.agents.prompt_store import PromptStore
from noema_graph.agents.prompts import default_prompts
from noema_graph.errors import ConfigurationError


class AgentRegistry:
    """Agent definitions by name (O(1) lookup), each with its rendered system prompt.

    Registering renders the definition's prompt from ``prompts``, so a missing prompt, a
    variable mismatch or an example that breaks the output schema fails here, at startup.
    """

    def __init__(
        self, definitions: Iterable[AgentDefinition] = (), *, prompts: PromptStore | None = None
    ) -> None:
        """Create a registry over ``prompts`` (default: the built-in agent prompts)."""
        self.prompts = prompts if prompts is not None else default_prompts()
        self._agents: dict[str, tuple[AgentDefinition, str]] = {}
        for definition in definitions:
            self.register(definition)

    def register(self, definition: AgentDefinition) -> AgentDefinition:
        """Validate and add ``definition``; a name already taken raises ConfigurationError."""
        if definition.name in self._agents:
            raise ConfigurationError(
                "agents",
                f"an agent named {definition.name!r} is already registered",
                fix="unregister the old one first or choose another name",
            )
        instructions = self.prompts.render_for(definition)
        self._agents[definition.name] = (definition, instructions)
        return definition

    def get(self, name: str) -> AgentDefinition:
        """Return the agent called ``name``; an unknown name raises ConfigurationError."""
        return self._entry(name)[0]

    def instructions(self, name: str) -> str:
        """Return the rendered system prompt of agent ``name``."""
        return self._entry(name)[1]

    def get_all(self) -> tuple[AgentDefinition, ...]:
        """Return every definition in registration order."""
        return tuple(definition for definition, _ in self._agents.values())

    def unregister(self, name: str) -> AgentDefinition:
        """Remove and return the agent called ``name``."""
        definition = self.get(name)
        del self._agents[name]
        return definition

    def names(self) -> tuple[str, ...]:
        """Return the registered names in registration order."""
        return tuple(self._agents)

    def _entry(self, name: str) -> tuple[AgentDefinition, str]:
        try:
            return self._agents[name]
        except KeyError:
            raise ConfigurationError(
                "agent", f"no agent named {name!r}", fix=f"use one of {list(self._agents)}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._agents

    def __len__(self) -> int:
        return len(self._agents)


@cache
def default_registry() -> AgentRegistry:
    """Return the process-wide registry of the ten Noema agents (built and validated once)."""
    return AgentRegistry(DEFINITIONS)
