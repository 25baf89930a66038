"""Agent configuration: one frozen, validated pydantic model.

Defaults follow the NoeAgent design (seed 004, section 8). ``mode="ask"`` forces a read-only
configuration: one iteration, no toolkits, no permissions, no memory writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langchain_core.tools import ToolException
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from noema_graph.errors import ConfigurationError, NoemaError
from noema_graph.grounding.choices import choices_problem, parse_choices
from noema_graph.grounding.openings import opening_problem, parse_opening
from noema_graph.grounding.reading import RequestReader
from noema_graph.grounding.sources import REQUEST_SOURCES, parse_source
from noema_graph.hooks import Hooks

Permission = Literal["fs:read", "fs:write", "shell:execute", "net:outbound"]
Toolkit = Literal["search", "bash", "python_executor", "file_edit"]
Protocol = Literal["auto", "native", "react"]

ALL_PERMISSIONS: tuple[Permission, ...] = ("fs:read", "fs:write", "net:outbound", "shell:execute")
DEFAULT_TOOLKITS: tuple[Toolkit, ...] = ("search", "bash", "python_executor", "file_edit")
DEFAULT_TOOL_ERRORS: tuple[type[Exception], ...] = (
    NoemaError,  # ToolError, ConfigurationError from a tool's own checks
    ToolException,
    ValidationError,  # arguments that do not fit the tool's schema
    ValueError,
    TypeError,
    LookupError,
    ArithmeticError,
    OSError,  # files, processes, sockets: ConnectionError and TimeoutError included
    RuntimeError,  # what clients (the MCP client among them) raise for a failed request
)
"""What a tool's failure looks like; a tool raising something else has a bug."""


class MCPServer(BaseModel):
    """One MCP server: a stdio command or a streamable-HTTP URL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Server name; its tools are exposed as '<name>__<tool>'.")
    command: str | None = Field(default=None, description="Executable for the stdio transport.")
    args: tuple[str, ...] = Field(default=(), description="Arguments of the stdio command.")
    env: dict[str, str] = Field(default_factory=dict, description="Environment for the server.")
    cwd: str | None = Field(default=None, description="Working directory of the stdio server.")
    url: str | None = Field(default=None, description="Endpoint for streamable HTTP.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers.")
    connect_timeout_s: float = Field(default=30.0, gt=0, description="Session start timeout.")
    read_timeout_s: float = Field(default=60.0, gt=0, description="Per-request read timeout.")

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        if not value or not value.replace("-", "_").isidentifier() or "__" in value:
            msg = f"server name {value!r} must be a non-empty identifier without '__'"
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> MCPServer:
        if (self.command is None) == (self.url is None):
            msg = f"server {self.name!r} needs exactly one of 'command' (stdio) or 'url' (http)"
            raise ValueError(msg)
        return self


class PlannedStep(BaseModel):
    """One step of an agent's default plan: the tool it calls and where its arguments come from.

    Attributes:
        tool: The tool to call; several names separated by ``|`` offer a choice (tools whose
            reference arguments have nothing to refer to drop out).
        args: Fixed argument values.
        sources: Arguments read from earlier tool results (argument -> source, see
            :mod:`noema_graph.grounding.sources`), or ``"request"`` for the user's request.
        offer: Optional arguments the model may fill (the others keep their defaults);
            required arguments not determined otherwise are always the model's.
        description: The step as shown to the model; default: made from the above.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1)
    args: dict[str, object] = Field(default_factory=dict[str, object])
    sources: dict[str, str] = Field(default_factory=dict[str, str])
    offer: tuple[str, ...] = ()
    description: str = ""

    @field_validator("sources")
    @classmethod
    def _sources_parse(cls, value: dict[str, str]) -> dict[str, str]:
        for source in value.values():
            if source not in REQUEST_SOURCES:
                parse_source(source)
        return value

    @property
    def tools(self) -> tuple[str, ...]:
        """Return the tools this step may call."""
        return tuple(t.strip() for t in self.tool.split("|") if t.strip())

    def text(self) -> str:
        """Return the step's description for the model."""
        if self.description:
            return self.description
        tools = " or ".join(self.tools)
        given = [*self.args, *self.sources]
        return f"Call {tools}" + (f" (with {', '.join(given)} given)." if given else ".")


class AgentConfig(BaseModel):
    """Everything that shapes one agent: mode, model, limits, tools, memory, output schema."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    mode: Literal["ask", "agent"] = Field(default="agent", description="ask: read-only Q&A.")
    name: str = Field(default="noema", description="Agent name, reported in logs and output.")
    version: str = Field(default="1.0.0", description="Agent version, reported in output.")
    instructions: str = Field(
        default="",
        description="Agent-specific system instructions (role, rules, few-shot examples) "
        "placed before every prompt of the run.",
    )
    model: str | None = Field(default=None, description="Model spec for make_model().")
    planning_model: str | None = Field(default=None, description="Model spec for planning.")
    protocol: Protocol = Field(default="auto", description="Action protocol: native or react.")
    max_iterations: int = Field(default=25, ge=1, description="execute_step calls at most.")
    max_tool_calls_per_step: int = Field(
        default=16,
        ge=1,
        description="Tool calls of one model message run at most this many at a time; the "
        "rest wait for the next group (or are refused with tool_call_overflow='refuse').",
    )
    tool_call_overflow: Literal["queue", "refuse"] = Field(
        default="queue",
        description="Calls past max_tool_calls_per_step: run in a later group, or refuse them.",
    )
    tool_errors: tuple[type[Exception], ...] = Field(
        default=DEFAULT_TOOL_ERRORS,
        description="Exceptions a tool may raise that become error observations the model "
        "reads; any other exception is a bug and ends the run with the exception.",
    )
    reflection_interval: int = Field(default=3, ge=1, description="Iterations between reflections.")
    max_replans: int = Field(default=3, ge=0, description="Plan revisions at most.")
    timeout_s: float | None = Field(default=600.0, gt=0, description="Wall-clock budget.")
    max_total_tokens: int | None = Field(default=None, ge=1, description="Token budget.")
    max_cost_usd: float | None = Field(default=None, ge=0, description="USD cost budget.")
    loop_threshold: int = Field(default=3, ge=2, description="Identical calls that mean a loop.")
    clarify: bool = Field(
        default=False,
        description="Offer the model an ask_user tool; calling it pauses the run (interrupt) "
        "until the caller resumes with the user's answer.",
    )
    confirm_tools: tuple[str, ...] = Field(
        default=(), description="Tool names whose calls wait for approval before running."
    )
    confirm_permissions: tuple[Permission, ...] = Field(
        default=(), description="Calls of tools needing one of these permissions wait."
    )
    confirm_non_idempotent: bool = Field(
        default=False, description="Calls of every non-idempotent tool wait for approval."
    )
    hooks: Hooks = Field(
        default_factory=Hooks, description="pre_process / post_process hooks by node name."
    )
    model_retries: int = Field(default=3, ge=1, description="Attempts for transient errors.")
    plan_retries: int = Field(default=2, ge=1, description="Attempts to get a valid plan.")
    tool_timeout_s: float = Field(default=60.0, gt=0, description="Per tool call timeout.")
    enabled_toolkits: tuple[Toolkit, ...] = Field(default=DEFAULT_TOOLKITS)
    mcp_servers: tuple[MCPServer, ...] = Field(default=())
    permissions: tuple[Permission, ...] = Field(default=ALL_PERMISSIONS)
    persist_memory: bool = Field(default=True, description="Store results in long-term memory.")
    working_directory: Path | None = Field(default=None, description="Sandbox root for tools.")
    output_schema: type[BaseModel] | None = Field(default=None, description="Result schema.")
    price_overrides: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="USD per million (input, output) tokens by model name; wins over genai-prices.",
    )
    answer_after_tool_results: int | None = Field(
        default=None,
        ge=1,
        description="After this many successful tool results in a run, execute_step offers "
        "no tools, so the next turn answers from them; None: never.",
    )
    default_plan: tuple[PlannedStep, ...] = Field(
        default=(),
        description="The agent's default plan: a model that does not plan (the embedded one) "
        "follows it step by step, a model that plans refines it.",
    )
    request_reader: RequestReader | None = Field(
        default=None,
        description="Reads the request before any tool runs: whether it asks for a change "
        "or a question, and the records it refers to (see noema_graph.grounding.reading); "
        "None: no check, every offered tool may run.",
    )
    answer_sources: dict[str, str] = Field(
        default_factory=dict[str, str],
        description="Output-schema fields filled from tool results, never generated: field -> "
        "source (noema_graph.grounding.sources), e.g. {'brier': 'compute_calibration:brier'}.",
    )
    answer_openings: dict[str, str] = Field(
        default_factory=dict[str, str],
        description="Text fields whose first words are filled from tool results; the model "
        "writes the rest: field -> template (noema_graph.grounding.openings), e.g. "
        "{'advice': 'You are {compute_calibration:direction}: ...'}.",
    )
    answer_choices: dict[str, str] = Field(
        default_factory=dict[str, str],
        description="Text and list fields the model writes whose entries are chosen from the "
        "run's data: field -> choices (noema_graph.grounding.choices), e.g. {'key_concepts': "
        "'get_chunks:source.title + terms(get_chunks:chunks.*.text)'}.",
    )
    secret_fields: dict[str, tuple[str, ...]] = Field(
        default_factory=dict[str, tuple[str, ...]],
        description="Per tool, the fields of its result the learner must not be shown "
        "(e.g. {'get_card': ('back',)}); they are masked in every text of the answer.",
    )
    answer_fields: dict[str, tuple[str, ...]] = Field(
        default_factory=dict[str, tuple[str, ...]],
        description="Per tool, the fields of its result the answer prompt shows (dotted "
        "paths, lists walked, e.g. {'get_review_history': ('reviews.rating',)}); () leaves "
        "the tool out of the answer prompt; a tool not named shows its whole result.",
    )
    answer_rows: dict[str, PositiveInt] = Field(
        default_factory=dict[str, PositiveInt],
        description="Per tool, how many entries of each list in its result the answer "
        "prompt shows, the first ones (e.g. {'get_review_history': 5}); grounding still "
        "reads the whole result.",
    )
    check_claims: bool = Field(
        default=False,
        description="Check the answer and thoughts for claimed effects (created, flagged, "
        "sent...) no successful tool call backs; each adds a hallucinated_action entry to "
        "the output's reasoning and lowers its confidence.",
    )

    def __init__(self, **data: Any) -> None:
        """Validate ``data``; any invalid field raises :class:`ConfigurationError` naming it."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _configuration_error(exc) from None

    @model_validator(mode="before")
    @classmethod
    def _ask_mode_is_read_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("mode") == "ask":
            return {
                **data,
                "max_iterations": 1,
                "enabled_toolkits": (),
                "permissions": (),
                "persist_memory": False,
                "clarify": False,
            }
        return data

    @field_validator("answer_sources", "answer_openings", "answer_choices")
    @classmethod
    def _sources_parse(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        parse = {
            "answer_sources": parse_source,
            "answer_openings": parse_opening,
            "answer_choices": parse_choices,
        }[str(info.field_name)]
        for field, text in value.items():
            try:
                parse(text)
            except ValueError as exc:
                raise ValueError(f"{field}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _sources_name_fields(self) -> AgentConfig:
        fields = self.output_schema.model_fields if self.output_schema else {}
        for key, named in (
            ("answer_sources", self.answer_sources),
            ("answer_openings", self.answer_openings),
        ):
            if unknown := sorted(named.keys() - fields.keys()):
                msg = f"{key} names fields {unknown} the output_schema does not have"
                raise ValueError(msg)
        if problem := opening_problem(self.answer_openings, self.answer_sources, fields):
            raise ValueError(f"answer_openings: {problem}")
        if problem := choices_problem(self.answer_choices, self.answer_sources, fields):
            raise ValueError(f"answer_choices: {problem}")
        return self

    @field_validator("output_schema")
    @classmethod
    def _schema_is_model(cls, value: object) -> object:
        if value is not None and not (isinstance(value, type) and issubclass(value, BaseModel)):
            msg = "must be a pydantic BaseModel subclass"
            raise ValueError(msg)
        return value

    @property
    def confirms_tools(self) -> bool:
        """Return True when some tool calls may need the user's approval."""
        return bool(self.confirm_tools or self.confirm_permissions or self.confirm_non_idempotent)

    def recursion_limit(self) -> int:
        """Return a superstep bound the routers always reach first.

        Each iteration costs execute_step plus one superstep per group of tool calls (up to
        ``max_tool_calls_per_step`` groups when every call must run alone), one more with
        review_tools; each reflection two more (reflect, revise_plan); plan and finalize
        add two. The margin leaves room for the routers to see ``remaining_steps`` run low
        and finalize.
        """
        reflections = self.max_iterations // self.reflection_interval + self.max_replans + 2
        per_iteration = 1 + self.max_tool_calls_per_step + (1 if self.confirms_tools else 0)
        return per_iteration * self.max_iterations + 2 * reflections + 10


def _configuration_error(exc: ValidationError) -> ConfigurationError:
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "AgentConfig"
    value = first.get("input")
    return ConfigurationError(
        field,
        f"{first['msg']} (got {value!r})",
        fix=f"pass a valid value for AgentConfig.{field}; see docs/configuration.md",
    )
