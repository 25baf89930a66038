"""What an agent is: :class:`AgentDefinition`, a frozen description the factory compiles."""

from __future__ import annotations

import re
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationError,
    field_validator,
    model_validator,
)

from noema_graph.config import AgentConfig, Permission, PlannedStep
from noema_graph.errors import ConfigurationError, InvalidValue
from noema_graph.grounding.choices import choices_problem, parse_choices, unchosen_lists
from noema_graph.grounding.openings import opening_problem, parse_opening
from noema_graph.grounding.sources import REQUEST_SOURCES, parse_source
from noema_graph.hooks import Hooks
from noema_graph.nodes.answer_fields import field_problem
from noema_graph.noema.operations import DOMAIN_OPERATIONS

_SEMVER = re.compile(r"^\d+\.\d+\.\d+$")


class AgentLimits(BaseModel):
    """Default limits of one agent; each becomes the AgentConfig field of the same name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_iterations: int = Field(default=4, ge=1, description="execute_step calls at most.")
    reflection_interval: int = Field(default=3, ge=1, description="Iterations per reflection.")
    max_replans: int = Field(default=1, ge=0, description="Plan revisions at most.")
    timeout_s: float = Field(default=180.0, gt=0, description="Wall-clock budget in seconds.")
    max_total_tokens: int | None = Field(default=60_000, ge=1, description="Token budget.")
    max_cost_usd: float | None = Field(default=None, ge=0, description="USD budget.")
    answer_after_tool_results: int | None = Field(
        default=None, ge=1, description="Successful tool results after which the agent answers."
    )


class AgentDefinition(BaseModel):
    """One Noema agent: identity, prompt, tools, output schema and default limits.

    Attributes:
        name: Registry key and graph name (a Python identifier).
        description: One line; also the description of the tool that consults this agent.
        version: Semantic version, reported in every output.
        prompt: Name of the system prompt in the :class:`~noema_graph.agents.PromptStore`.
        prompt_version: Version of that prompt.
        prompt_variables: Values for the prompt's ``${variables}`` (besides ``examples``).
        tools: Domain operations the agent may call (keys of ``DOMAIN_OPERATIONS``).
        tool_arguments: Per tool, the only arguments offered to the model (the others keep
            their defaults); tools not named offer all their arguments.
        subagents: Registered agents this one may consult as tools (``consult_<name>``).
        output_schema: The pydantic model the final result must match.
        limits: Default limits; callers may override them per graph.
        hooks: pre_process / post_process hooks by node name or "agent".
        clarify: Offer the ask_user tool (the run pauses for the user's answer).
        confirm_tools: Domain operations whose calls wait for the user's approval.
        confirm_non_idempotent: Every non-idempotent call waits for approval.
        plan: The default plan (see :class:`~noema_graph.config.PlannedStep`): a model that
            does not plan follows it, one that plans refines it.
        answer_sources: Output fields filled from tool results, never generated.
        answer_openings: Text fields whose first words are filled from tool results (see
            :mod:`~noema_graph.grounding.openings`); the model writes the rest.
        answer_choices: Text and list fields the model writes whose entries are chosen from
            the run's tool results and request (see :mod:`~noema_graph.grounding.choices`):
            every list of text the model writes must have one.
        answer_fields: Per tool, the fields of its result the answer prompt shows (dotted
            paths, lists walked; see :mod:`~noema_graph.nodes.answer_fields`): what the
            answer step reads and nothing else. ``[]`` leaves the tool out of the answer
            prompt; a tool not named shows its whole result.
        answer_rows: Per tool, how many entries of each list in its result the answer
            prompt shows (the first ones; the rest are left out of the prompt, not of the
            run's grounding): a long history the answer needs only a sample of.
        secret_fields: Per tool, the fields of its result the learner must not be shown
            (dotted paths into the result's data, e.g. a card's ``back`` for the tutor): no
            text field of an answer may contain them. The agent's answer check and the
            evaluation's leak scorer read this one declaration.
        scope_examples: Example requests of this agent's job (English, French, Spanish):
            a request nearer another agent's examples by a clear margin is refused as that
            agent's job (see :mod:`~noema_graph.agents.scope`); none: not judged.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    name: str
    description: str = Field(min_length=1)
    version: str = "1.0.0"
    prompt: str
    prompt_version: str = "1.0.0"
    prompt_variables: dict[str, str] = Field(default_factory=dict[str, str])
    tools: tuple[str, ...] = ()
    tool_arguments: dict[str, tuple[str, ...]] = Field(default_factory=dict[str, tuple[str, ...]])
    subagents: tuple[str, ...] = ()
    output_schema: type[BaseModel]
    limits: AgentLimits = Field(default_factory=AgentLimits)
    hooks: Hooks = Field(default_factory=Hooks)
    clarify: bool = False
    confirm_tools: tuple[str, ...] = ()
    confirm_non_idempotent: bool = False
    plan: tuple[PlannedStep, ...] = ()
    answer_sources: dict[str, str] = Field(default_factory=dict[str, str])
    answer_openings: dict[str, str] = Field(default_factory=dict[str, str])
    answer_choices: dict[str, str] = Field(default_factory=dict[str, str])
    secret_fields: dict[str, tuple[str, ...]] = Field(default_factory=dict[str, tuple[str, ...]])
    answer_fields: dict[str, tuple[str, ...]] = Field(default_factory=dict[str, tuple[str, ...]])
    answer_rows: dict[str, PositiveInt] = Field(default_factory=dict[str, PositiveInt])
    scope_examples: tuple[str, ...] = ()

    def __init__(self, **data: Any) -> None:
        """Validate ``data``; an invalid field raises :class:`ConfigurationError` naming it."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"]) or "AgentDefinition"
            raise ConfigurationError(
                f"AgentDefinition({data.get('name')!r}).{where}", first["msg"]
            ) from None

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        if not value.isidentifier():
            msg = f"{value!r} is not an identifier (letters, digits and '_')"
            raise ValueError(msg)
        return value

    @field_validator("version", "prompt_version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not _SEMVER.match(value):
            msg = f"{value!r} is not a semantic version like '1.0.0'"
            raise ValueError(msg)
        return value

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - DOMAIN_OPERATIONS.keys())
        if unknown:
            msg = f"unknown domain tools {unknown}; use names from DOMAIN_OPERATIONS"
            raise ValueError(msg)
        if len(set(value)) != len(value):
            msg = f"tools {list(value)} name a tool twice"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _arguments_of_own_tools(self) -> AgentDefinition:
        stray = sorted(self.tool_arguments.keys() - set(self.tools))
        if stray:
            msg = f"tool_arguments names tools {stray} that are not in tools"
            raise ValueError(msg)
        return self

    def _inputs(self, tool: str) -> set[str] | None:
        """Return the argument names of one of the agent's tools (None: not its tool)."""
        if tool in self.tools:
            return set(DOMAIN_OPERATIONS[tool].input_model.model_fields)
        if tool.removeprefix("consult_") in self.subagents:
            return {"question"}
        return None

    @model_validator(mode="after")
    def _plan_names_own_tools(self) -> AgentDefinition:
        for index, step in enumerate(self.plan):
            for tool in step.tools:
                inputs = self._inputs(tool)
                if inputs is None:
                    msg = f"plan[{index}].tool: {tool!r} is not one of the agent's tools"
                    raise ValueError(msg)
                named = [*step.args, *step.sources, *step.offer]
                if len(step.tools) == 1 and (unknown := sorted(set(named) - inputs)):
                    msg = f"plan[{index}]: {tool} has no arguments {unknown}"
                    raise ValueError(msg)
            for source in step.sources.values():
                self._check_source(f"plan[{index}].sources", source)
        return self

    @model_validator(mode="after")
    def _secrets_name_own_tools(self) -> AgentDefinition:
        if unknown := sorted(self.secret_fields.keys() - set(self.tools)):
            msg = f"secret_fields: {unknown} are not among the agent's tools {list(self.tools)}"
            raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _answer_fields_name_own_tools(self) -> AgentDefinition:
        for tool, paths in self.answer_fields.items():
            if self._inputs(tool) is None:
                msg = f"answer_fields: {tool!r} is not one of the agent's tools {list(self.tools)}"
                raise ValueError(msg)
            for path in paths:
                if problem := field_problem(path):
                    raise ValueError(f"answer_fields.{tool}: {problem}")
        for tool in self.answer_rows:
            if self._inputs(tool) is None:
                msg = f"answer_rows: {tool!r} is not one of the agent's tools {list(self.tools)}"
                raise ValueError(msg)
        return self

    @model_validator(mode="after")
    def _sources_name_own_fields(self) -> AgentDefinition:
        unknown = sorted(self.answer_sources.keys() - self.output_schema.model_fields.keys())
        if unknown:
            msg = f"answer_sources: {self.output_schema.__name__} has no fields {unknown}"
            raise ValueError(msg)
        for field, source in self.answer_sources.items():
            self._check_source(f"answer_sources.{field}", source)
        return self

    @model_validator(mode="after")
    def _openings_name_own_fields(self) -> AgentDefinition:
        fields = self.output_schema.model_fields
        if unknown := sorted(self.answer_openings.keys() - fields.keys()):
            msg = f"answer_openings: {self.output_schema.__name__} has no fields {unknown}"
            raise ValueError(msg)
        if problem := opening_problem(self.answer_openings, self.answer_sources, fields):
            raise ValueError(f"answer_openings: {problem}")
        for field, template in self.answer_openings.items():
            try:
                opening = parse_opening(template)
            except ValueError as exc:
                raise ValueError(f"answer_openings.{field}: {exc}") from None
            for source in opening.sources:
                self._check_source(f"answer_openings.{field}", source.text)
        return self

    @model_validator(mode="after")
    def _choices_name_own_fields(self) -> AgentDefinition:
        fields = self.output_schema.model_fields
        if problem := choices_problem(self.answer_choices, self.answer_sources, fields):
            raise ValueError(f"answer_choices: {problem}")
        if free := unchosen_lists(self.answer_choices, self.answer_sources, fields):
            msg = (
                f"answer_choices: the list fields {free} of {self.output_schema.__name__} have "
                "no choices; declare where their entries come from, e.g. "
                "'terms(tool:path)' or 'tool:path'"
            )
            raise ValueError(msg)
        for field, text in self.answer_choices.items():
            try:
                parts = parse_choices(text)
            except ValueError as exc:
                raise ValueError(f"answer_choices.{field}: {exc}") from None
            for part in parts:
                if part.source is not None:
                    self._check_source(f"answer_choices.{field}", part.source.text)
        return self

    def _check_source(self, where: str, source: str) -> None:
        if source in REQUEST_SOURCES:
            return
        for tool in parse_source(source).tools:
            if self._inputs(tool) is None:
                msg = f"{where}: {source!r} reads {tool!r}, which is not one of the agent's tools"
                raise InvalidValue(msg)

    @property
    def permissions(self) -> tuple[Permission, ...]:
        """Return the permissions the agent's tools need, and no others."""
        needed: set[Permission] = {
            permission
            for name in self.tools
            if (permission := DOMAIN_OPERATIONS[name].permission) is not None
        }
        return tuple(sorted(needed))

    def to_config(self, instructions: str, **overrides: Any) -> AgentConfig:
        """Return the AgentConfig of this agent with ``instructions`` as its system prompt.

        Args:
            instructions: The rendered system prompt.
            **overrides: AgentConfig fields that win over the definition's defaults
                (``price_overrides``, ``max_iterations``, ``protocol``...).
        """
        base: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "instructions": instructions,
            "enabled_toolkits": (),
            "permissions": self.permissions,
            "persist_memory": False,
            "output_schema": self.output_schema,
            "hooks": self.hooks,
            "clarify": self.clarify,
            "confirm_tools": self.confirm_tools,
            "confirm_non_idempotent": self.confirm_non_idempotent,
            "default_plan": self.plan,
            "answer_sources": self.answer_sources,
            "answer_openings": self.answer_openings,
            "answer_choices": self.answer_choices,
            "secret_fields": self.secret_fields,
            "answer_fields": self.answer_fields,
            "answer_rows": self.answer_rows,
            **self.limits.model_dump(),
        }
        return AgentConfig(**{**base, **overrides})
