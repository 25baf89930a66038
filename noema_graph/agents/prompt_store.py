"""Versioned agent system prompts with few-shot examples, validated when registered.

A prompt is a :class:`~noema_graph.prompts.PromptTemplate` plus worked examples. Its text
places the examples with ``${examples}``; every other ``${variable}`` is filled from the
agent definition. Validation renders each prompt with the definition's variables and checks
each example's answer against the agent's output schema, so a broken prompt fails at startup,
never in the middle of a run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from string import Template

from pydantic import BaseModel, ValidationError

from noema_graph.agents.definition import AgentDefinition
from noema_graph.errors import ConfigurationError
from noema_graph.prompts import EXAMPLES_HEADING, PromptTemplate

EXAMPLES = "examples"
"""The variable every prompt with examples uses to place them."""


@dataclass(frozen=True)
class FewShotExample:
    """One worked example: a request, the tool calls made, and the final answer (JSON).

    ``observations``, when given, holds one tool result per action; showing them teaches a
    small model to copy the answer's figures from the observation, not from the example.
    """

    request: str
    actions: tuple[str, ...]
    answer: str
    observations: tuple[str, ...] = ()

    def render(self, index: int) -> str:
        """Return the example as prompt text."""
        lines = [f"Example {index}:", f"Request: {self.request}"]
        for i, action in enumerate(self.actions):
            lines.append(f"Action: {action}")
            if i < len(self.observations):
                lines.append(f"Observation: {self.observations[i]}")
        lines.append(f"Final answer: {self.answer}")
        return "\n".join(lines)


@dataclass(frozen=True)
class AgentPrompt:
    """A versioned system prompt and its few-shot examples."""

    template: PromptTemplate
    examples: tuple[FewShotExample, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        """Return (name, version)."""
        return self.template.name, self.template.version

    @property
    def variables(self) -> frozenset[str]:
        """Return the variables the caller must supply (all but ``examples``)."""
        return self.template.variables - {EXAMPLES}

    def render(self, **values: object) -> str:
        """Render the prompt with ``values`` and the examples."""
        shots = "\n\n".join(e.render(i) for i, e in enumerate(self.examples, 1))
        shots = f"{EXAMPLES_HEADING}\n{shots}" if shots else ""
        extra = {EXAMPLES: shots} if EXAMPLES in self.template.variables else {}
        return self.template.render(**values, **extra)


def _check_syntax(prompt: AgentPrompt) -> None:
    name, version = prompt.key
    where = f"prompt {name!r} v{version}"
    if any(m.group("invalid") is not None for m in Template.pattern.finditer(prompt.template.text)):
        raise ConfigurationError(where, "has a '$' that is not a ${variable}", fix="write $$")
    if prompt.examples and EXAMPLES not in prompt.template.variables:
        raise ConfigurationError(
            where, "has examples but no ${examples}", fix="place them with ${examples}"
        )


class PromptStore:
    """Agent prompts by (name, version); the newest version is the default."""

    def __init__(self, prompts: Iterable[AgentPrompt] = ()) -> None:
        """Create a store, registering ``prompts``."""
        self._prompts: dict[tuple[str, str], AgentPrompt] = {}
        for prompt in prompts:
            self.register(prompt)

    def register(self, prompt: AgentPrompt) -> None:
        """Add ``prompt`` after checking its syntax; a taken (name, version) raises."""
        _check_syntax(prompt)
        if prompt.key in self._prompts:
            raise ConfigurationError(
                "prompts", f"prompt {prompt.key[0]!r} v{prompt.key[1]} is already registered"
            )
        self._prompts[prompt.key] = prompt

    def get(self, name: str, version: str | None = None) -> AgentPrompt:
        """Return prompt ``name`` at ``version`` (None: the newest)."""
        if version is not None and (name, version) in self._prompts:
            return self._prompts[(name, version)]
        versions = sorted(
            (tuple(int(p) for p in v.split(".")), v) for n, v in self._prompts if n == name
        )
        if version is None and versions:
            return self._prompts[(name, versions[-1][1])]
        raise ConfigurationError(
            "prompt",
            f"no prompt {name!r} at version {version or 'any'}",
            fix=f"register it; known: {sorted(self._prompts)}",
        )

    def render_for(self, definition: AgentDefinition) -> str:
        """Return the system prompt of ``definition``, validating it on the way.

        Raises:
            ConfigurationError: The prompt is missing, its variables differ from the
                definition's ``prompt_variables``, or an example's answer does not match the
                definition's output schema.
        """
        prompt = self.get(definition.prompt, definition.prompt_version)
        where = f"agent {definition.name!r}: prompt {definition.prompt!r}"
        given = frozenset(definition.prompt_variables)
        if given != prompt.variables:
            raise ConfigurationError(
                where,
                f"needs variables {sorted(prompt.variables)}, the definition gives {sorted(given)}",
                fix="make AgentDefinition.prompt_variables name exactly the template's variables",
            )
        for index, example in enumerate(prompt.examples, 1):
            _check_example(where, index, example, definition.output_schema)
        return prompt.render(**definition.prompt_variables)

    def __len__(self) -> int:
        return len(self._prompts)


def _check_example(
    where: str, index: int, example: FewShotExample, schema: type[BaseModel]
) -> None:
    if example.observations and len(example.observations) != len(example.actions):
        raise ConfigurationError(
            where,
            f"example {index} has {len(example.observations)} observations for "
            f"{len(example.actions)} actions",
            fix="give one observation per action, or none",
        )
    try:
        schema.model_validate(json.loads(example.answer))
    except (ValidationError, json.JSONDecodeError) as exc:
        raise ConfigurationError(
            where,
            f"example {index}'s answer does not match {schema.__name__}: {exc}",
            fix="make the example's answer valid JSON of the output schema",
        ) from None
