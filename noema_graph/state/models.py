"""Frozen value models held in graph state; the same classes serve as structured-output schemas."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, model_validator

from noema_graph import clock
from noema_graph.state.human import HUMAN_MODELS
from noema_graph.state.outcome import NodeOutcome

StepStatus = Literal["pending", "in_progress", "completed", "failed"]
StopReason = Literal[
    "max_iterations",
    "timeout",
    "budget_exceeded",
    "cancelled",
    "loop_detected",
    "llm_error",
    "hook_error",
    "hook_veto",
    "refused",
    "forbidden",
]
StepKind = Literal[
    "plan",
    "plan_fallback",
    "thought",
    "tool",
    "hallucinated_action",
    "reflection",
    "plan_revised",
    "compaction",
    "limit",
    "error",
    "final",
    "memory",
    "clarification",
    "approval",
]


def utc_now() -> str:
    """Return the current UTC time as ISO 8601 (from :mod:`noema_graph.clock`)."""
    return clock.utc_now()


def _step_id() -> str:
    return uuid4().hex[:8]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class TaskStep(_Frozen):
    """One step of a plan."""

    step_id: str = Field(default_factory=_step_id, description="Short unique id of the step.")
    description: str = Field(description="What to do in this step, in one sentence.")
    status: StepStatus = Field(default="pending", description="Progress of the step.")
    result: str | None = Field(default=None, description="What the step produced, once done.")
    tool: str | None = Field(
        default=None, description="The tool this step calls (a default plan's step), if fixed."
    )
    args: dict[str, Any] = Field(
        default_factory=dict[str, Any], description="Fixed argument values of that tool."
    )
    sources: dict[str, str] = Field(
        default_factory=dict[str, str],
        description="Arguments read from earlier tool results: argument -> source.",
    )
    offer: tuple[str, ...] = Field(default=(), description="Optional arguments the model may fill.")


class TaskPlan(_Frozen):
    """An ordered plan that turns a request into steps."""

    goal: str = Field(description="The user's goal, restated in one sentence.")
    steps: tuple[TaskStep, ...] = Field(default=(), description="Ordered steps, at least one.")
    current_step_index: int = Field(default=0, ge=0, description="Index of the step under way.")
    is_complete: bool = Field(default=False, description="True once every step is done.")

    @property
    def current_step(self) -> TaskStep | None:
        """Return the step under way, or None when the plan is complete."""
        if self.is_complete or self.current_step_index >= len(self.steps):
            return None
        return self.steps[self.current_step_index]

    def completed_results(self) -> list[tuple[str, str]]:
        """Return (description, result) of every completed step, in order."""
        return [(s.description, s.result or "") for s in self.steps if s.status == "completed"]

    def advance(self, result: str) -> TaskPlan:
        """Return a copy where the current step is completed with ``result``."""
        index = self.current_step_index
        if index >= len(self.steps):
            return self.model_copy(update={"is_complete": True})
        steps = list(self.steps)
        steps[index] = steps[index].model_copy(update={"status": "completed", "result": result})
        nxt = index + 1
        if nxt < len(steps):
            steps[nxt] = steps[nxt].model_copy(update={"status": "in_progress"})
        return self.model_copy(
            update={
                "steps": tuple(steps),
                "current_step_index": nxt,
                "is_complete": nxt >= len(steps),
            }
        )

    def started(self) -> TaskPlan:
        """Return a copy whose current step is marked in progress."""
        step = self.current_step
        if step is None or step.status != "pending":
            return self
        steps = list(self.steps)
        steps[self.current_step_index] = step.model_copy(update={"status": "in_progress"})
        return self.model_copy(update={"steps": tuple(steps)})


class PlanDraft(_Frozen):
    """What the planner model is asked for: a goal and step descriptions."""

    goal: str = Field(max_length=300, description="The user's goal, restated in one sentence.")
    steps: list[Annotated[str, Field(max_length=200)]] = Field(
        min_length=1, max_length=12, description="Ordered, concrete step descriptions."
    )

    def to_plan(self, max_steps: int = 12) -> TaskPlan:
        """Turn the draft into a fresh plan whose first step is in progress.

        Blank and repeated step descriptions are dropped (small models repeat themselves)
        and at most ``max_steps`` steps are kept.
        """
        unique = dict.fromkeys(s.strip() for s in self.steps if s.strip())
        steps = tuple(TaskStep(description=s) for s in list(unique)[:max_steps])
        if not steps:
            steps = (TaskStep(description=self.goal),)
        return TaskPlan(goal=self.goal, steps=steps).started()


class Reflection(_Frozen):
    """The model's assessment of progress and what to do next."""

    progress: str = Field(max_length=500, description="What has been accomplished so far.")
    remaining: str = Field(max_length=500, description="What still needs to be done.")
    decision: Literal["continue", "revise", "finish"] = Field(
        description="continue the plan, revise it, or finish now."
    )
    reason: str = Field(max_length=500, description="Why this decision.")


class ToolAction(_Frozen):
    """A tool call and its output as recorded in the trace."""

    tool: str
    input: Any = None
    output: Any = None


OUTPUT_FROM = "output_from"
"""Key of a stored trace step whose ``action.output`` was left out: it equals the observation."""
OBSERVATION_FROM = "observation_from"
"""Key of a stored trace step whose observation is its ToolMessage's text (resolved on read)."""


def restore_output(fields: dict[str, Any]) -> dict[str, Any]:
    """Return stored step ``fields`` with ``action.output`` put back from the observation.

    The checkpoint serializer (:mod:`noema_graph.storage.serde`) leaves out a tool result
    that is the observation itself and marks the step with :data:`OUTPUT_FROM`; fields
    without the mark are returned unchanged.
    """
    if fields.get(OUTPUT_FROM) != "observation":
        return fields
    restored = {k: v for k, v in fields.items() if k != OUTPUT_FROM}
    action = restored.get("action")
    if isinstance(action, dict):
        restored["action"] = {**action, "output": restored.get("observation")}
    return restored


class ReasoningStep(_Frozen):
    """One entry of the ReAct trace: a thought and, optionally, an action and its observation."""

    @model_validator(mode="before")
    @classmethod
    def _stored(cls, data: object) -> object:
        """Put back the tool result a stored step left out (see :func:`restore_output`).

        Raises:
            ValueError: the step still refers to its ToolMessage (read without
                ``noema_graph.storage.sqlite.persistence.serializer()``, which resolves it).
        """
        if not isinstance(data, dict):
            return data
        if OBSERVATION_FROM in data:
            raise ValueError(
                "trace step refers to its ToolMessage for the observation: read the checkpoint "
                "with noema_graph.storage.sqlite.persistence.serializer()"
            )
        return restore_output(data) if OUTPUT_FROM in data else data

    step: int = 0
    kind: StepKind = "thought"
    thought: str = ""
    action: ToolAction | None = None
    observation: str | None = None
    status: Literal["ok", "error"] = "ok"
    round: int = Field(default=0, description="Iteration that produced this step.")
    duration_ms: float = 0.0
    timestamp: str = Field(default_factory=utc_now)
    call_id: str | None = Field(default=None, description="Id of the tool call, if any.")
    started_at: str | None = Field(default=None, description="When a tool call started (UTC).")
    ended_at: str | None = Field(default=None, description="When a tool call ended (UTC).")
    error_type: str | None = Field(
        default=None, description="A failed tool call's kind of error (e.g. invalid_input)."
    )
    fix: dict[str, Any] | None = Field(
        default=None, description="The call a failed tool call's error names as its fix."
    )


class Usage(_Frozen):
    """Tokens and USD cost summed over every model call of a run."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = 0.0
    model_calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None
            if self.cost_usd is None or other.cost_usd is None
            else (self.cost_usd + other.cost_usd)
        )
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost_usd=cost,
            model_calls=self.model_calls + other.model_calls,
        )


class ToolTime(_Frozen):
    """Running total of tool time: each group of concurrent calls counts its slowest call.

    ``group`` and ``group_max`` describe the latest group, so the next write of the same
    group only adds what it ran longer than the slowest call seen so far.
    """

    group: str = ""
    group_max: float = 0.0
    total: float = 0.0


class LoopGuard(_Frozen):
    """The repeated tool call that forced a reflection, and how long its streak was then."""

    signature: str
    streak: int


class RunInfo(_Frozen):
    """Identity of the current run inside a thread."""

    run_id: str = Field(default_factory=lambda: uuid4().hex)
    trace_id: str = Field(default_factory=lambda: uuid4().hex)
    started_at: str = Field(default_factory=utc_now)
    model: str = "unknown"
    request: str = ""


class HookFailure(_Frozen):
    """A pre/post hook that raised: the run ends cleanly with ``code`` as its error code."""

    code: Literal["hook_error", "hook_veto", "forbidden"]
    node: str
    stage: Literal["pre_process", "post_process"]
    message: str


RefusalCode = Literal["not_found", "invalid_input", "forbidden"]
"""Domain error codes a refused request ends with (``error.code``)."""
Intent = Literal["change", "question", "uncertain", "other", "none"]
"""What a request asks of an agent that can write: a change, an answer, unclear, another
agent's job; ``none``: the agent has no tool that writes, nothing to decide."""


class Refusal(_Frozen):
    """Why a request is refused before any tool runs, in the learner's words."""

    code: RefusalCode
    message: str = Field(description="The domain problem, e.g. 'There is no card 250.'")
    candidates: tuple[str, ...] = Field(default=(), description="What the learner may mean.")


class Reference(_Frozen):
    """One record the request refers to, linked against the store with a score in [0, 1]."""

    kind: str
    value: Any = Field(description="The record's id, or its name for records named by name.")
    label: str = Field(default="", description="How the record reads (its name or front).")
    text: str = Field(default="", description="The words of the request that refer to it.")
    score: float = 1.0


class RequestReading(_Frozen):
    """What the run made of its request before any write: the change it asks for, if any.

    Read once, in ``plan``, by the agent's ``request_reader``. Only a ``change`` may reach
    a tool that writes, and only the ``writes`` it names, with the ``references`` it holds.
    """

    intent: Intent = "none"
    writes: tuple[str, ...] = Field(default=(), description="Write tools the request asks for.")
    score: float = Field(default=0.0, description="Margin of the intent decision.")
    references: tuple[Reference, ...] = ()
    refusal: Refusal | None = None
    note: str = Field(default="", description="What the run would change, when it does not.")

    def values(self, kind: str) -> list[Any]:
        """Return the values of the references of ``kind``, in order of mention."""
        return [r.value for r in self.references if r.kind == kind]


STATE_MODELS: tuple[type[BaseModel], ...] = (
    TaskStep,
    TaskPlan,
    PlanDraft,
    Reflection,
    ToolAction,
    ReasoningStep,
    Usage,
    ToolTime,
    LoopGuard,
    RunInfo,
    NodeOutcome,
    HookFailure,
    Refusal,
    Reference,
    RequestReading,
    *HUMAN_MODELS,
)
