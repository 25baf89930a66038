"""The agent registry: definitions by unique name, validated against their prompts."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from noema_graph.agents.catalog import DEFINITIONS
from noema_graph.agents.definition import AgentDefinition
from noema_graph.agents.prompt_store import PromptStore
from noema_graph.agents.prompts import default_prompts
from noema_graph.registry import Registry


class AgentRegistry(Registry[tuple[AgentDefinition, str]]):
    """Agent definitions by name (O(1) lookup), each with its rendered system prompt.

    Registering renders the definition's prompt from ``prompts``, so a missing prompt, a
    variable mismatch or an example that breaks the output schema fails here, at startup.
    """

    noun = "agent"

    def __init__(
        self, definitions: Iterable[AgentDefinition] = (), *, prompts: PromptStore | None = None
    ) -> None:
        """Create a registry over ``prompts`` (default: the built-in agent prompts)."""
        super().__init__()
        self.prompts = prompts if prompts is not None else default_prompts()
        for definition in definitions:
            self.register(definition)

    def register(self, definition: AgentDefinition) -> AgentDefinition:
        """Validate and add ``definition``; a name already taken raises ConfigurationError."""
        self._add(definition.name, (definition, self.prompts.render_for(definition)))
        return definition

    def get(self, name: str) -> AgentDefinition:
        """Return the agent called ``name``; an unknown name raises ConfigurationError."""
        return self._item(name)[0]

    def instructions(self, name: str) -> str:
        """Return the rendered system prompt of agent ``name``."""
        return self._item(name)[1]

    def get_all(self) -> tuple[AgentDefinition, ...]:
        """Return every definition in registration order."""
        return tuple(definition for definition, _ in self._items.values())

    def unregister(self, name: str) -> AgentDefinition:
        """Remove and return the agent called ``name``."""
        return self._pop(name)[0]


@cache
def default_registry() -> AgentRegistry:
    """Return the process-wide registry of the ten Noema agents (built and validated once)."""
    return AgentRegistry(DEFINITIONS)
