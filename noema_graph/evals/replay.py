"""A chat model that re-emits the model outputs recorded in a trajectory.

The model answers by the kind of call it receives, so the rebuilt run follows the recording:

* a structured call for ``PlanDraft``: the next recorded plan (its goal and steps);
* a structured call for ``Reflection``: the next recorded reflection;
* a structured call for any other schema: the recorded final output;
* any other call: the next recorded turn, either its tool calls (with the thought that came
  with them) or its text answer; when none is left, the final output as text.

A ``consult_<agent>`` call carries the subagent's recorded output; while that subagent runs,
its own plan, turns and final output are replayed, then the parent's resume. Consulting two
subagents in the same turn is not supported (their calls would interleave). A call the
recording cannot answer raises :class:`ReplayExhausted`.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, PrivateAttr
from typing_extensions import TypedDict

from noema_graph.errors import NoemaError

PLAN_SCHEMA = "PlanDraft"
REFLECTION_SCHEMA = "Reflection"
REPLAY_MODEL_NAME = "replay"
_PLAN_PREFIX = "Plan for: "


class ReplayExhausted(NoemaError):
    """The rebuilt run asked the replay model for an output the recording does not hold."""


class _Plan(TypedDict):
    goal: str
    steps: list[str]


class _Reflection(TypedDict):
    progress: str
    remaining: str
    decision: str
    reason: str


@dataclass
class Script:
    """What one agent run's model said, by kind of call."""

    goal: str = ""
    plans: deque[_Plan] = field(default_factory=deque[_Plan])
    reflections: deque[_Reflection] = field(default_factory=deque[_Reflection])
    turns: deque[dict[str, Any]] = field(default_factory=deque[dict[str, Any]])
    final: object = None


def _plan(thought: str, observation: str | None, goal: str) -> _Plan:
    if thought.startswith(_PLAN_PREFIX):
        goal = thought[len(_PLAN_PREFIX) :]
    steps = [line for line in (observation or "").splitlines() if line.strip()]
    return {"goal": goal, "steps": steps or [goal]}


def _reflection(thought: str, observation: str | None) -> _Reflection:
    decision, _, reason = (observation or "continue: ").partition(": ")
    if decision not in ("continue", "revise", "finish"):
        decision, reason = "continue", observation or ""
    return {"progress": thought, "remaining": "", "decision": decision, "reason": reason}


def script_of(
    steps: Sequence[Mapping[str, Any]],
    final: object,
    *,
    request: str,
    subagents: Mapping[str, Any] | None = None,
) -> Script:
    """Build the script of one run from its steps.

    Args:
        steps: Dicts with ``kind``, ``thought``, ``observation``, ``round`` and ``action``
            (``{"tool", "input"}`` or None); ``kind`` None treats the step by its shape.
        final: The run's result.
        request: The request (the goal of a plan that names none).
        subagents: Output contracts of subagent calls, keyed by the step's position.
    """
    script = Script(goal=request, final=final)
    children = subagents or {}
    turn: dict[str, Any] | None = None
    for index, step in enumerate(steps):
        kind, action = step.get("kind"), step.get("action")
        if kind in ("plan", "plan_revised"):
            goal = script.plans[-1]["goal"] if script.plans else request
            script.plans.append(_plan(step.get("thought", ""), step.get("observation"), goal))
        elif kind == "reflection":
            script.reflections.append(_reflection(step["thought"], step.get("observation")))
        elif action is not None and kind in (None, "tool", "hallucinated_action"):
            rnd = step.get("round")
            if turn is None or rnd is None or turn.get("round") != rnd:
                turn = {"thought": step.get("thought", ""), "calls": [], "round": rnd}
                script.turns.append(turn)
            turn["calls"].append({"name": action["tool"], "args": action.get("input") or {}})
            if (child := children.get(str(index))) is not None:
                turn.setdefault("children", []).append(_child_script(child))
        elif kind in (None, "thought") and step.get("thought"):
            turn = None
            script.turns.append({"text": step.get("observation") or step["thought"]})
    return script


def _child_script(output: Mapping[str, Any]) -> Script:
    steps = [
        {**s, "round": None}
        for s in (output.get("reasoning") or {}).get("steps", [])
        if s.get("kind") != "final"
    ]
    return script_of(steps, output.get("result"), request="")


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


class ReplayChatModel(BaseChatModel):
    """Answers every call from a recorded :class:`Script` (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model_name: str = REPLAY_MODEL_NAME
    script: Script
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _stack: list[Script] = PrivateAttr(default_factory=list[Script])
    _calls: list[int] = PrivateAttr(default_factory=lambda: [0])

    @classmethod
    def from_trajectory(cls, trajectory: Any) -> ReplayChatModel:
        """Return the replay model of a :class:`~noema_graph.trajectory.schema.Trajectory`."""
        meta = trajectory.metadata
        kinds: list[Any] = meta.get("step_kinds") or [None] * len(trajectory.steps)
        rounds: list[Any] = meta.get("step_rounds") or [None] * len(trajectory.steps)
        steps = [
            {**s.model_dump(), "kind": kind, "round": rnd}
            for s, kind, rnd in zip(trajectory.steps, kinds, rounds, strict=False)
        ]
        script = script_of(
            steps,
            trajectory.final_output,
            request=trajectory.input,
            subagents=meta.get("subagent_outputs"),
        )
        return cls(script=script)

    @property
    def _llm_type(self) -> str:
        return "replay"

    @property
    def calls(self) -> int:
        """How many calls the model answered."""
        return self._calls[0]

    def unused(self) -> int:
        """Return how many recorded turns, plans and reflections were never asked for."""
        return sum(len(s.turns) + len(s.plans) + len(s.reflections) for s in self._scripts())

    def _scripts(self) -> list[Script]:
        return self._stack or [self.script]

    def bind_tools(
        self, tools: Sequence[object], *, tool_choice: object = None, **kwargs: Any
    ) -> Runnable[Any, AIMessage]:
        """Remember which schema a structured-output call asks for; tools need no binding."""
        names = [_tool_name(t) for t in tools]
        if "ls_structured_output_format" in kwargs and len(names) == 1:
            return self.bind(replay_schema=names[0])
        return self.bind(replay_schema=None)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        replay_schema: str | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            if not self._stack:
                self._stack.append(self.script)
            self._calls[0] += 1
            message = self._answer(self._stack[-1], replay_schema)
        usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
        message = message.model_copy(
            update={"usage_metadata": usage, "id": f"replay-{self._calls[0]}"}
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _answer(self, script: Script, schema: str | None) -> AIMessage:
        if schema == PLAN_SCHEMA:
            plan = script.plans.popleft() if script.plans else {}
            return _structured(schema, plan)
        if schema == REFLECTION_SCHEMA:
            if not script.reflections:
                raise ReplayExhausted("the recording holds no further reflection")
            return _structured(schema, script.reflections.popleft())
        if schema is not None:
            if len(self._stack) > 1:
                self._stack.pop()  # a subagent's final answer ends its run
            if not isinstance(script.final, dict):
                raise ReplayExhausted(f"the recorded final output is not a {schema} object")
            return _structured(schema, script.final)
        if not script.turns:
            return AIMessage(content=_text(script.final))
        turn = script.turns.popleft()
        if "text" in turn:
            return AIMessage(content=turn["text"])
        self._stack.extend(reversed(turn.get("children", [])))
        calls = [
            {"name": c["name"], "args": c["args"], "id": f"call_{self._calls[0]}_{i}"}
            for i, c in enumerate(turn["calls"])
        ]
        return AIMessage(content=turn["thought"], tool_calls=calls)


def _structured(schema: str, args: Mapping[str, object]) -> AIMessage:
    call = {"name": schema, "args": dict(args), "id": f"call_{schema}", "type": "tool_call"}
    return AIMessage(content="", tool_calls=[call])


def _tool_name(tool: object) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        function: Any = tool.get("function") or {}
        return str(tool.get("name") or function.get("name"))
    return str(getattr(tool, "__name__", tool))
