"""The trajectory and dataset formats, as read and written by tools outside the package.

A trajectory is one run in execution order::

    {"input": str, "final_output": any,
     "steps": [{"thought": str, "action": {"tool": str, "input": object} | null,
                "observation": str | null, "error": str | null,
                "started_at": str | null, "ended_at": str | null,
                "message_index": int | null}],
     "usage": {"prompt_tokens", "completion_tokens", "total_tokens", "cost_usd"},
     "metadata": {...}}

A step's ``message_index`` is the position of the model message it came from in the run's
message list: the calls of one message share it. :meth:`Trajectory.from_messages` and
:meth:`Trajectory.to_messages` convert to and from OpenAI-style message lists (LangChain
messages are read too); ``metadata["message_roles"]`` keeps the role of every message.

An expected trajectory is a list of ``{"tool": str, "input": object}`` (one call per model
message) or a list of messages, each a list of such calls. A dataset is
``{"dataset": [{"id", "input", "expected_output", "expected_trajectory", "tags"}]}``; an item
without ``id`` gets ``item-<position>-<hash of its input>``. The names are fixed; unknown
keys are kept (``extra="allow"``) so a round trip through another tool loses nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import convert_to_openai_messages
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

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
    message_index: int | None = Field(
        default=None, description="Position of the model message the step came from."
    )


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

    def message_calls(self) -> list[list[StepAction]]:
        """Return the tool calls grouped by model message (one group per message with calls).

        Steps without ``message_index`` are read as one call per message.
        """
        groups = [[s.action for _, s in group if s.action is not None] for group in _groups(self)]
        return [group for group in groups if group]

    @classmethod
    def from_messages(
        cls, messages: Sequence[Mapping[str, Any] | BaseMessage] | Mapping[str, Any]
    ) -> Trajectory:
        """Return the trajectory of an OpenAI-style message list (or LangChain messages).

        The first user message is the input; each tool call is a step (its tool message's
        content the observation), an assistant message without calls is a step with a
        thought, except a last one, which is the final output.

        Raises:
            ConfigurationError: ``messages`` is not a list of messages.
        """
        return from_openai(openai_messages(messages))

    def to_messages(self) -> list[dict[str, Any]]:
        """Return the run as OpenAI-style messages (user, assistant with calls, tool, ...)."""
        return to_openai(self)

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
    expected_trajectory: list[ExpectedCall] | list[list[ExpectedCall]] | None = None
    tags: list[str] = Field(default_factory=list[str])

    def tag(self, key: str) -> str | None:
        """Return the value of the first ``key:value`` tag, or None."""
        prefix = f"{key}:"
        return next((t[len(prefix) :] for t in self.tags if t.startswith(prefix)), None)


class EvalDataset(_Open):
    """A list of tasks with unique ids."""

    dataset: list[EvalItem]

    @model_validator(mode="before")
    @classmethod
    def _stable_ids(cls, data: object) -> object:
        """Give every item without ``id`` one from its position and its input."""
        if not isinstance(data, dict) or not isinstance(data.get("dataset"), list):
            return data
        raw: dict[str, object] = {str(k): v for k, v in data.items()}
        items: list[object] = list(data["dataset"])
        raw["dataset"] = [_with_id(i, item) for i, item in enumerate(items)]
        return raw

    def by_id(self) -> dict[str, EvalItem]:
        """Return the items keyed by id."""
        return {item.id: item for item in self.dataset}


def item_id(position: int, request: str) -> str:
    """Return the stable id of an item without one: its position and a hash of its input."""
    digest = hashlib.sha256(request.encode("utf-8")).hexdigest()[:8]
    return f"item-{position}-{digest}"


def _with_id(position: int, item: object) -> object:
    if not isinstance(item, dict) or "id" in item or not isinstance(item.get("input"), str):
        return item
    fields: dict[str, object] = {str(k): v for k, v in item.items()}
    return {"id": item_id(position, str(fields["input"])), **fields}


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
        field, f"{what}: {first['msg']}", fix="see noema_graph.trajectory.schema for the format"
    )


def load_json(text: str) -> Any:
    """Return ``text`` parsed as JSON, or None when it is not JSON (tool observations)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[Any] = list(content)
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in parts)
    return "" if content is None else str(content)


def openai_messages(
    messages: Sequence[Mapping[str, Any] | BaseMessage] | Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Return ``messages`` as OpenAI message dicts, normalised as agentevals normalises them.

    Accepts a list of OpenAI dicts or LangChain messages, or ``{"messages": [...]}``.
    """
    if isinstance(messages, Mapping):
        messages = messages.get("messages", [messages] if "role" in messages else None)
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        raise ConfigurationError(
            "messages", f"{type(messages).__name__} is not a list of messages",
            fix="pass OpenAI-style dicts ({'role': ..., 'content': ...}) or LangChain messages",
        )  # fmt: skip
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, BaseMessage):
            out += convert_to_openai_messages([message])
            continue
        fields = dict(message)
        if fields.get("role") in ("ai", "assistant") and fields.get("tool_calls"):
            fields["tool_calls"] = [{**c, "id": c.get("id", "")} for c in fields["tool_calls"]]
        if fields.get("role") == "tool" and fields.get("tool_call_id") is None:
            fields["tool_call_id"] = ""
        if fields.get("content") is None:
            fields["content"] = ""
        out += convert_to_openai_messages([fields])
    return out


def call_of(raw: Mapping[str, Any]) -> StepAction:
    """Return the call of an OpenAI (``function``) or LangChain (``name``/``args``) tool call."""
    if "function" in raw:
        function: Mapping[str, Any] = raw["function"]
        arguments = function.get("arguments") or "{}"
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
        return StepAction(tool=str(function["name"]), input=args)
    return StepAction(tool=str(raw["name"]), input=raw.get("args"))


def from_openai(messages: list[dict[str, Any]]) -> Trajectory:
    """Return the trajectory of normalised OpenAI messages (see ``Trajectory.from_messages``)."""
    results = {
        m.get("tool_call_id"): _text(m.get("content")) for m in messages if m["role"] == "tool"
    }
    request = next((_text(m.get("content")) for m in messages if m["role"] == "user"), "")
    last = len(messages) - 1
    final: Any = None
    steps: list[TrajectoryStep] = []
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        text, calls = _text(message.get("content")), message.get("tool_calls") or []
        if not calls and index == last:
            final = text
        elif not calls:
            steps.append(TrajectoryStep(thought=text, message_index=index))
        for n, raw in enumerate(calls):
            steps.append(
                TrajectoryStep(
                    thought=text if n == 0 else "",
                    action=call_of(raw),
                    observation=results.get(raw.get("id")),
                    message_index=index,
                )
            )
    roles = [str(m["role"]) for m in messages]
    return Trajectory(
        input=request, final_output=final, steps=steps, metadata={"message_roles": roles}
    )


def _tool_call(step: TrajectoryStep, index: int) -> dict[str, Any]:
    action = step.action
    assert action is not None
    return {
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": action.tool, "arguments": json.dumps(action.input or {})},
    }


def _groups(trajectory: Trajectory) -> list[list[tuple[int, TrajectoryStep]]]:
    """Return the steps grouped by model message, each step with its position."""
    groups: list[list[tuple[int, TrajectoryStep]]] = []
    for position, step in enumerate(trajectory.steps):
        same = (
            groups
            and step.message_index is not None
            and groups[-1][-1][1].message_index == step.message_index
        )
        if same:
            groups[-1].append((position, step))
        else:
            groups.append([(position, step)])
    return groups


def _assistant(group: list[tuple[int, TrajectoryStep]]) -> list[dict[str, Any]]:
    called = [(i, s) for i, s in group if s.action is not None]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(s.thought for _, s in group)}
    if called:
        message["tool_calls"] = [_tool_call(s, i) for i, s in called]
    tools = [
        {"role": "tool", "tool_call_id": f"call_{i}", "content": s.observation or s.error or ""}
        for i, s in called
    ]
    return [message, *tools]


def to_openai(trajectory: Trajectory) -> list[dict[str, Any]]:
    """Return ``trajectory`` as OpenAI messages (see :meth:`Trajectory.to_messages`).

    A trajectory read from messages gets its roles back from ``metadata["message_roles"]``
    (the messages no step holds, such as system prompts, come back empty).
    """
    roles = trajectory.metadata.get("message_roles")
    if isinstance(roles, list) and roles:
        return _from_roles(trajectory, [str(r) for r in roles])
    messages: list[dict[str, Any]] = [{"role": "user", "content": trajectory.input}]
    for group in _groups(trajectory):
        messages += _assistant(group)
    if trajectory.final_output is not None:
        final = trajectory.final_output
        text = final if isinstance(final, str) else json.dumps(final, default=str)
        messages.append({"role": "assistant", "content": text})
    return messages


def _from_roles(trajectory: Trajectory, roles: list[str]) -> list[dict[str, Any]]:
    by_index: dict[int, list[tuple[int, TrajectoryStep]]] = {}
    for position, step in enumerate(trajectory.steps):
        if step.message_index is not None:
            by_index.setdefault(step.message_index, []).append((position, step))
    messages: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    first_user = roles.index("user") if "user" in roles else -1
    for index, role in enumerate(roles):
        if role == "assistant" and index in by_index:
            assistant, *tools = _assistant(by_index[index])
            messages.append(assistant)
            pending = tools
        elif role == "tool":
            messages.append(pending.pop(0) if pending else {"role": "tool", "content": ""})
        elif role == "assistant" and index == len(roles) - 1:
            final = trajectory.final_output
            text = final if isinstance(final, str) or final is None else json.dumps(final)
            messages.append({"role": "assistant", "content": text or ""})
        else:
            content = trajectory.input if index == first_user else ""
            messages.append({"role": role, "content": content})
    return messages
