"""The ten Noema agents: definitions, prompts, registry, domain tools, subagents, factory.

* :class:`AgentDefinition` describes one agent; :data:`DEFINITIONS` holds the ten.
* :class:`PromptStore` keeps versioned system prompts with few-shot examples.
* :class:`AgentRegistry` holds definitions by name; :func:`default_registry` the ten.
* :func:`build_agent` / :func:`get_graph` compile any agent into its own StateGraph.
"""

from typing import TYPE_CHECKING

from noema_graph._lazy import lazy_exports

if TYPE_CHECKING:
    from noema_graph.agents import schemas
    from noema_graph.agents.catalog import DEFINITIONS
    from noema_graph.agents.definition import AgentDefinition, AgentLimits
    from noema_graph.agents.domain_tools import domain_registry, domain_spec
    from noema_graph.agents.factory import DEFAULT_LEARNING_DB, build_agent, get_graph
    from noema_graph.agents.learners import Learner, ensure_demo_data, resolve_learner
    from noema_graph.agents.prompt_store import AgentPrompt, FewShotExample, PromptStore
    from noema_graph.agents.prompts import AGENT_PROMPTS, default_prompts
    from noema_graph.agents.registry import AgentRegistry, default_registry
    from noema_graph.agents.subagent import MAX_DEPTH, subagent_tool

__all__ = [
    "AGENT_PROMPTS",
    "DEFAULT_LEARNING_DB",
    "DEFINITIONS",
    "MAX_DEPTH",
    "AgentDefinition",
    "AgentLimits",
    "AgentPrompt",
    "AgentRegistry",
    "FewShotExample",
    "Learner",
    "PromptStore",
    "build_agent",
    "default_prompts",
    "default_registry",
    "domain_registry",
    "domain_spec",
    "ensure_demo_data",
    "get_graph",
    "resolve_learner",
    "schemas",
    "subagent_tool",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "noema_graph.agents": ("schemas",),
        "noema_graph.agents.catalog": ("DEFINITIONS",),
        "noema_graph.agents.definition": ("AgentDefinition", "AgentLimits"),
        "noema_graph.agents.domain_tools": ("domain_registry", "domain_spec"),
        "noema_graph.agents.factory": ("DEFAULT_LEARNING_DB", "build_agent", "get_graph"),
        "noema_graph.agents.learners": ("Learner", "ensure_demo_data", "resolve_learner"),
        "noema_graph.agents.prompt_store": ("AgentPrompt", "FewShotExample", "PromptStore"),
        "noema_graph.agents.prompts": ("AGENT_PROMPTS", "default_prompts"),
        "noema_graph.agents.registry": ("AgentRegistry", "default_registry"),
        "noema_graph.agents.subagent": ("MAX_DEPTH", "subagent_tool"),
    },
)
