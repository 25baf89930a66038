"""The trajectory and dataset formats, as read and written by tools outside the package.

A trajectory is one run in execution order::

    {"input": str, "final_output": any,
     "steps": [{"thought": str, "action": {"tool": str, "input": object} | null,
                "observation": str | null, "error": str | null,
                "started_at": str | null, "ended_at": str | null}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "cost_usd"},
     "metadata": {...}}

An expected trajectory is a list of ``{"tool": str, "input": object}``. A dataset is
``{"dataset": [{"id", "input", "expected_output", "expected_trajectory", "tags"}]}``.
The names are fixed; unknown keys are kept (``extra="allow"``) so a round trip through
another tool loses nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from noema_graph.errors import ConfigurationError


class _Open(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class StepAction(_Open):
    """The tool call of a step."""

    tool: str = Field(description="Name of the tool called.")
    input: Any = Field(default=None, description="Arguments of the call.")


class TrajectoryStep(_Open):
    """One step: a thought and, optionally, a tool call with its observation or error."""

    thought: str = Field(default="", description="What the agent thought (or said) here.")
    action: StepAction | None = Field(default=None, description="The tool call, if any.")
    observation: str | None = Field(default=None, description="What the tool returned.")
    error: str | None = Field(default=None, description="Why the call failed; None if it did not.")
    started_at: str | None = Field(default=None, description="ISO 8601 start time.")
    ended_at: str | None = Field(default=None, description="ISO 8601 end time.")


class TrajectoryUsage(_Open):
    """Tokens and USD cost of the run (cost None when the price is unknown)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = 0.0


class Trajectory(_Open):
    """One recorded run: request, steps in execution order, final output, usage, metadata."""

    input: str = Field(description="The user's request.")
    final_output: Any = Field(default=None, description="The run's result.")
    steps: list[TrajectoryStep] = Field(default_factory=list[TrajectoryStep])
    usage: TrajectoryUsage = Field(default_factory=TrajectoryUsage)
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])

    def tool_calls(self) -> list[StepAction]:
        """Return every tool call, in execution order."""
        return [s.action for s in self.steps if s.action is not None]

    def to_json(self, *, indent: int | None = None) -> str:
        """Serialise to the JSON format of this module."""
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes) -> Trajectory:
        """Parse a trajectory; raise :class:`ConfigurationError` naming the bad field."""
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise _format_error("trajectory", exc) from None


class ExpectedCall(_Open):
    """One call of an expected trajectory."""

    tool: str
    input: Any = Field(default_factory=dict[str, Any])


class EvalItem(_Open):
    """One task of a dataset.

    Tags are free text; ``agent:<name>`` names the agent that runs the item and
    ``user:<learner>`` the learner it runs for (see :mod:`noema_graph.evals.runner`).
    """

    id: str
    input: str
    expected_output: Any = None
    expected_trajectory: list[ExpectedCall] | None = None
    tags: list[str] = Field(default_factory=list[str])

    def tag(self, key: str) -> str | None:
        """Return the value of the first ``key:value`` tag, or None."""
        prefix = f"{key}:"
        return next((t[len(prefix) :] for t in self.tags if t.startswith(prefix)), None)


class EvalDataset(_Open):
    """A list of tasks with unique ids."""

    dataset: list[EvalItem]

    def by_id(self) -> dict[str, EvalItem]:
        """Return the items keyed by id."""
        return {item.id: item for item in self.dataset}


def load_dataset(path: str | Path) -> EvalDataset:
    """Read a dataset file.

    Raises:
        ConfigurationError: The file is missing, not JSON, or not a dataset; or ids repeat.
    """
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigurationError(
            "dataset", f"no file {str(source)!r}", fix="pass the path of a dataset JSON file"
        ) from None
    try:
        dataset = EvalDataset.model_validate_json(text)
    except ValidationError as exc:
        raise _format_error(f"dataset {str(source)!r}", exc) from None
    ids = [item.id for item in dataset.dataset]
    if repeated := sorted({i for i in ids if ids.count(i) > 1}):
        raise ConfigurationError(
            "dataset", f"ids {repeated} repeat in {str(source)!r}", fix="give every item its own id"
        )
    return dataset


def load_trajectories(path: str | Path) -> dict[str, Trajectory]:
    """Read ``{"trajectories": {item_id: trajectory}}`` (or a bare mapping) from ``path``."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    mapping = raw.get("trajectories", raw) if isinstance(raw, dict) else None
    if not isinstance(mapping, dict):
        raise ConfigurationError(
            "trajectories",
            f"{str(path)!r} holds no mapping of item id to trajectory",
            fix='write {"trajectories": {"<item id>": <trajectory>}}',
        )
    return {str(k): Trajectory.model_validate(v) for k, v in mapping.items()}


def _format_error(what: str, exc: ValidationError) -> ConfigurationError:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or what
    return ConfigurationError(
        field, f"{what}: {first['msg']}", fix="see noema_graph.evals.trajectory for the format"
    )


def load_json(text: str) -> Any:
    """Return ``text`` parsed as JSON, or None when it is not JSON (tool observations)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None
