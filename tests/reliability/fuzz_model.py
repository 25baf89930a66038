"""Malformed model output, generated: a fuzz chat model, its strategies, and one checked run.

A case is a short list of replies (messages a careless or broken model might return, garbage
for the plan and reflection schemas, exceptions) served in order to whatever the graph asks;
once the case is used up the model answers well-formed defaults, so every run ends. A run goes
through the real agent graph (:func:`~noema_graph.graphs.build_agent_graph`) on a real SQLite
checkpointer, sync or async, and :func:`check` says how it ended: an exception that escaped
``invoke``/``ainvoke`` (the bug the fuzz hunts), or a finished run whose every tool call was
answered by one observation and whose error, if any, has a typed ``error.code``.

Used by ``tests/reliability/test_fuzz_model_output.py`` (a few hundred cases) and
``bench/bench_fuzz.py`` (ten thousand and more).
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, get_args

from hypothesis import strategies as st
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool, tool
from pydantic import ConfigDict, ValidationError

from noema_graph import AgentConfig, build_agent_graph
from noema_graph.nodes.output import UNEARNED_MESSAGES
from noema_graph.state.models import StopReason

TOOL_NAMES = ("add", "echo", "fail")
ERROR_CODES = frozenset(get_args(StopReason)) | frozenset(UNEARNED_MESSAGES)
"""Every typed ``error.code`` a finished run may carry."""
FALLBACK_ANSWERS: dict[str, dict[str, Any]] = {
    "PlanDraft": {"goal": "answer", "steps": ["answer the request"]},
    "Reflection": {"progress": "p", "remaining": "r", "decision": "finish", "reason": "done"},
}
"""Well-formed structured answers the model gives once its case is used up."""


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text."""
    return text


def _fail(reason: str) -> str:
    raise ValueError(f"refused: {reason}")


fail = StructuredTool.from_function(_fail, name="fail", description="Always fails.")
echo.metadata = {"concurrency_safe": True}  # several echo calls run as concurrent tasks
TOOLS: list[BaseTool] = [add, echo, fail]


class ProviderError(Exception):
    """An exception class no library knows: what a custom provider may raise."""


class UnprintableError(Exception):
    """An exception whose ``str`` itself raises."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this error")


TRANSIENT = (TimeoutError, ConnectionResetError)
"""Raised replies that the node's RetryPolicy retries (``model_retries`` attempts)."""


class Served:
    """What a fuzz model handed out: replies of the case, exceptions among them, defaults."""

    def __init__(self, replies: list[Any]) -> None:
        """Serve ``replies`` in order, then defaults."""
        self.replies = replies
        self.calls = 0
        self.raised: list[BaseException] = []
        self.defaults = 0
        self.lock = threading.Lock()

    def next(self) -> Any | None:
        """Return the next reply of the case, or None once it is used up."""
        with self.lock:
            self.calls += 1
            if not self.replies:
                self.defaults += 1
                return None
            reply = self.replies.pop(0)
            if isinstance(reply, BaseException):
                self.raised.append(reply)
            return reply


class FuzzChatModel(BaseChatModel):
    """Serves a case's replies in order, then well-formed defaults (never runs dry).

    ``bind_tools`` keeps the bound schema, so a default knows whether a plan, a reflection or
    a plain answer was asked for; copies (``model_copy``) share the same :class:`Served`.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model_name: str = "fuzz"
    served: Served

    @property
    def _llm_type(self) -> str:
        return "fuzz"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [getattr(t, "__name__", None) or getattr(t, "name", "") for t in tools]
        schema = names[0] if kwargs.get("tool_choice") and names else None
        return self.bind(fuzz_schema=schema)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self.served.next()
        if isinstance(reply, BaseException):
            raise reply
        if reply is None:
            reply = default_reply(kwargs.get("fuzz_schema"))
        return ChatResult(generations=[ChatGeneration(message=reply)])


def default_reply(schema: str | None) -> AIMessage:
    """Return a well-formed answer: the schema's fallback value, or plain text."""
    if schema in FALLBACK_ANSWERS:
        call = {"name": schema, "args": FALLBACK_ANSWERS[schema], "id": f"d_{uuid.uuid4().hex}"}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content="done")


# --- strategies ---------------------------------------------------------------------------

SURROGATES = st.sampled_from(["\ud800", "ok\udfffok", "\udbff"])
_ODD = [
    object(),
    {1, 2},
    frozenset({"a"}),
    b"\xff\xfe bytes",
    Decimal("1.5"),
    dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
    uuid.UUID(int=7),
    (1, "two"),
    ValueError("an exception as a value"),
    AIMessage(content="a message inside a message"),
    10**400,
    -(2**64),
    2**63,
    float("nan"),
    float("inf"),
]
ODD_VALUES = st.integers(0, len(_ODD) - 1).map(lambda i: _ODD[i])
"""Values no JSON has (picked by index: hypothesis would print them eagerly)."""
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**62, max_value=2**80)
    | st.floats()
    | st.text(max_size=12)
    | SURROGATES
    | ODD_VALUES
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers() | st.none(), inner, max_size=4)
    ),
    max_leaves=10,
)


def json_text(value: Any) -> str:
    """Return ``value`` as JSON text, or as Python text when JSON cannot hold it."""
    try:
        return json.dumps(value, default=str)
    except (ValueError, TypeError, RecursionError):
        return repr(value)


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = [value]
    return value


def _circular() -> dict[str, Any]:
    loop: dict[str, Any] = {"text": "loop"}
    loop["self"] = loop
    return loop


_GIANT: list[Any] = [
    {"text": "x" * 300_000},
    {"a": 10**400, "b": 1},
    {"text": _deep(200)},
    {"text": [list(range(50))] * 200},
    _circular(),
]
GIANT = st.integers(0, len(_GIANT) - 1).map(lambda i: _GIANT[i])
INTS = (
    st.integers(-100, 100)
    | st.integers(min_value=2**62, max_value=2**80)
    | st.integers(min_value=-(2**80), max_value=-(2**62))
)
GOOD_ARGS = st.fixed_dictionaries({"a": INTS, "b": INTS}) | st.fixed_dictionaries(
    {"text": st.text(max_size=20) | SURROGATES | VALUES}
)
"""Arguments of the right names: values at and past the 64-bit edge, odd text."""
ARGS = (
    GOOD_ARGS
    | st.dictionaries(st.text(max_size=6) | st.integers(), VALUES, max_size=4)
    | st.lists(VALUES, max_size=3)
    | GOOD_ARGS.map(json_text)
    | st.text(max_size=20)
    | VALUES
    | GIANT
)
NAMES = (
    st.sampled_from(TOOL_NAMES)
    | st.sampled_from(["", "Add", "PlanDraft", "ask_user", "x" * 3000, "tool\x00name"])
    | st.text(max_size=8)
    | st.none()
    | st.integers()
    | st.lists(st.integers(), max_size=2)
    | SURROGATES
)
IDS = (
    st.text(max_size=8)
    | st.sampled_from(["dup", "dup", ""])
    | st.none()
    | st.integers()
    | st.lists(st.integers(), max_size=2)
    | SURROGATES
)
CALL_KEYS = {"name": NAMES, "args": ARGS, "id": IDS, "type": st.just("tool_call") | st.text()}
FIFTY = st.fixed_dictionaries(
    {"name": st.sampled_from(TOOL_NAMES), "args": GOOD_ARGS},
    optional={"id": IDS, "type": st.just("tool_call")},
)
CALLS = st.lists(st.fixed_dictionaries({}, optional=CALL_KEYS), max_size=4) | st.lists(
    FIFTY, min_size=50, max_size=50
)
BLOCKS = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20) | VALUES})
CONTENT = (
    st.text(max_size=40)
    | SURROGATES
    | st.lists(st.text(max_size=10) | BLOCKS | VALUES, max_size=4)
    | VALUES
)
COUNTS = (
    st.integers(0, 1_000)
    | st.integers(-1_000, -1)
    | st.integers(min_value=2**40, max_value=2**90)
    | st.sampled_from(["12", "lots", "", "1e3", "1e999", None, True, 3.5, float("nan"), [], {}])
    | st.sampled_from([10**400, -(10**400)])  # past float range: float() raises
)
USAGE = (
    st.none()
    | VALUES
    | st.fixed_dictionaries(
        {},
        optional={
            "input_tokens": COUNTS,
            "output_tokens": COUNTS,
            "total_tokens": COUNTS,
            "input_token_details": VALUES,
        },
    )
)
METADATA = st.dictionaries(st.text(max_size=6) | st.integers(), VALUES, max_size=3)


def build_message(
    content: Any,
    calls: list[dict[str, Any]],
    usage: Any,
    metadata: dict[Any, Any],
    invalid: list[dict[str, Any]],
    validated: bool,
) -> AIMessage:
    """Return an AIMessage of these fields: validated when LangChain accepts them, else built
    without validation (as a provider that calls ``model_construct`` would)."""
    fields = {
        "content": content,
        "tool_calls": calls,
        "usage_metadata": usage,
        "additional_kwargs": metadata,
        "response_metadata": metadata,
        "invalid_tool_calls": invalid,
    }
    if validated:
        try:
            return AIMessage(**fields)
        except (ValidationError, TypeError, ValueError, KeyError):
            pass
    return AIMessage.model_construct(**fields)


INVALID_CALLS = st.lists(
    st.fixed_dictionaries(
        {"name": NAMES, "args": st.text(max_size=10) | st.none(), "id": IDS, "error": st.none()}
    ),
    max_size=2,
)
MESSAGES = st.builds(
    build_message,
    content=CONTENT,
    calls=CALLS,
    usage=USAGE,
    metadata=METADATA,
    invalid=INVALID_CALLS,
    validated=st.booleans(),
)


def _structured(name: str, args: Any) -> AIMessage:
    return AIMessage.model_construct(
        content="", tool_calls=[{"name": name, "args": args, "id": "s1", "type": "tool_call"}]
    )


PLAN_GARBAGE = st.builds(
    _structured,
    st.just("PlanDraft"),
    st.fixed_dictionaries(
        {},
        optional={"goal": VALUES | st.text(max_size=400), "steps": st.lists(VALUES) | VALUES},
    )
    | ARGS,
)
REFLECTION_GARBAGE = st.builds(
    _structured,
    st.just("Reflection"),
    st.fixed_dictionaries(
        {},
        optional={
            "progress": VALUES,
            "remaining": VALUES,
            "decision": st.sampled_from(["continue", "revise", "finish", "bogus"]) | VALUES,
            "reason": VALUES | st.text(min_size=501, max_size=600),
        },
    )
    | ARGS,
)
EXCEPTIONS = st.sampled_from(
    [
        RuntimeError,
        ValueError,
        KeyError,
        TypeError,
        ZeroDivisionError,
        ProviderError,
        OSError,
        UnprintableError,
        TimeoutError,
        ConnectionResetError,
    ]
).map(lambda cls: cls("model exploded"))
REACT_TEXT = st.builds(
    lambda name, args, thought: AIMessage(
        content=f"Thought: {thought}\nAction: {name}\nAction Input: {args}"
    ),
    st.sampled_from(TOOL_NAMES) | st.text(max_size=8),
    GOOD_ARGS.map(json_text)
    | st.sampled_from(["[1, 2]", "{'a': 1}", '{"a": 1e999, "b": 1}', '"text"', "", "{"])
    | st.text(max_size=30),
    st.text(max_size=20) | SURROGATES,
) | st.builds(lambda answer: AIMessage(content=f"Final Answer: {answer}"), st.text(max_size=30))
"""ReAct text for the ``react`` protocol: actions with odd inputs, final answers."""
REPLIES = MESSAGES | PLAN_GARBAGE | REFLECTION_GARBAGE | EXCEPTIONS | REACT_TEXT


@dataclass(frozen=True)
class Case:
    """One generated run: the action protocol and the replies served in order."""

    protocol: Literal["native", "react"]
    replies: list[Any]


CASES = st.builds(
    Case,
    protocol=st.sampled_from(["native", "native", "react"]),
    replies=st.lists(REPLIES, min_size=1, max_size=5),
)
"""Cases of both action protocols (bench/bench_fuzz.py)."""
NATIVE_CASES = st.builds(
    Case, protocol=st.just("native"), replies=st.lists(REPLIES, min_size=1, max_size=5)
)
"""Cases of the native protocol only: the ReAct path keeps one known crash until
execute_step passes its parsed ReAct message through the boundary (see the xfail test)."""


# --- one checked run ----------------------------------------------------------------------

CONFIG = AgentConfig(
    enabled_toolkits=(),
    max_iterations=3,
    reflection_interval=2,
    max_replans=1,
    plan_retries=2,
    model_retries=1,  # a transient error is final at once: no retry sleeps in the fuzz
    persist_memory=False,
    timeout_s=60,
)


@dataclass
class Verdict:
    """How one run ended: the escaped exception, or the finished run's error code."""

    escaped: str | None = None
    code: str | None = None
    problems: list[str] = field(default_factory=list[str])
    observations: int = 0
    protocol: str = "native"


def new_graph(served: Served, checkpointer: Any, protocol: str = "native") -> Any:
    """Return the real agent graph with a fuzz model serving ``served``."""
    model = FuzzChatModel(served=served)
    config = CONFIG.model_copy(update={"protocol": protocol})
    return build_agent_graph(config, model=model, tools=TOOLS, checkpointer=checkpointer)


def as_case(case: Case | list[Any]) -> Case:
    """Return ``case``; a bare list of replies is a case of the native protocol."""
    return case if isinstance(case, Case) else Case("native", list(case))


def request(thread: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the input and run config of one fuzz run on ``thread``."""
    return {"messages": [("user", "do the thing")]}, {"configurable": {"thread_id": thread}}


def saved_messages(checkpointer: Any, thread: str) -> list[BaseMessage]:
    """Return the messages the checkpointer holds for ``thread`` (read through a graph)."""
    _, config = request(thread)
    return new_graph(Served([]), checkpointer).get_state(config).values.get("messages", [])


def check(state: dict[str, Any], served: Served, saved: dict[str, Any]) -> Verdict:
    """Judge a finished run: answered calls, a typed error code, llm_error after a raise."""
    output = state.get("output") or {}
    error = output.get("error") or {}
    verdict = Verdict(code=error.get("code"))
    if verdict.code is not None and verdict.code not in ERROR_CODES:
        verdict.problems.append(f"untyped error code: {verdict.code!r}")
    if served.raised and verdict.code != "llm_error":
        verdict.problems.append(
            f"raise without llm_error: {served.raised[0]!r} -> {verdict.code!r}"
        )
    messages = state.get("messages") or []
    verdict.observations = sum(isinstance(m, ToolMessage) for m in messages)
    verdict.problems += unanswered(messages)
    if saved.get("output") != output:
        verdict.problems.append("checkpoint differs: the saved output is not the run's")
    return verdict


def unanswered(messages: Sequence[BaseMessage]) -> list[str]:
    """Return a problem for each call not answered by exactly one ToolMessage after it."""
    problems: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        answers: Counter[str] = Counter()
        for later in messages[index + 1 :]:
            if not isinstance(later, ToolMessage):
                break
            answers[later.tool_call_id] += 1
        for call in message.tool_calls:
            if answers.get(str(call["id"])) != 1:
                problems.append(f"call not answered once: {call['id']!r} x{answers[call['id']]}")
    return problems


def escaped(exc: BaseException) -> Verdict:
    """Return the verdict of a run whose exception escaped."""
    try:
        text = str(exc)[:160]
    except RuntimeError:  # UnprintableError
        text = "<unprintable>"
    return Verdict(escaped=f"{type(exc).__name__}: {text}")


def run_sync(case: Case | list[Any], checkpointer: Any, thread: str) -> Verdict:
    """Run ``case`` through the graph with ``invoke``; never raises."""
    case = as_case(case)
    served = Served(list(case.replies))
    graph = new_graph(served, checkpointer, case.protocol)
    inputs, config = request(thread)
    try:
        state = graph.invoke(inputs, config)
        saved = graph.get_state(config).values
    except Exception as exc:  # what the fuzz counts
        verdict = escaped(exc)
    else:
        verdict = check(state, served, saved)
    verdict.protocol = case.protocol
    return verdict


async def run_async(case: Case | list[Any], checkpointer: Any, thread: str) -> Verdict:
    """Run ``case`` through the graph with ``ainvoke``; never raises."""
    case = as_case(case)
    served = Served(list(case.replies))
    graph = new_graph(served, checkpointer, case.protocol)
    inputs, config = request(thread)
    try:
        state = await graph.ainvoke(inputs, config)
        saved = (await graph.aget_state(config)).values
    except Exception as exc:  # what the fuzz counts
        verdict = escaped(exc)
    else:
        verdict = check(state, served, saved)
    verdict.protocol = case.protocol
    return verdict


def unlocked(path: Path, timeout_s: float = 1.0) -> bool:
    """Return True when another connection can take the write lock on ``path`` now."""
    conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return True


@dataclass
class Tally:
    """Counts of many runs: escaped exception classes, error codes, problems."""

    runs: int = 0
    escaped: Counter[str] = field(default_factory=Counter[str])
    codes: Counter[str] = field(default_factory=Counter[str])
    problems: Counter[str] = field(default_factory=Counter[str])
    observations: int = 0
    examples: dict[str, str] = field(default_factory=dict[str, str])
    protocols: Counter[str] = field(default_factory=Counter[str])

    def add(self, verdict: Verdict) -> None:
        """Count one run."""
        self.runs += 1
        self.observations += verdict.observations
        self.protocols[verdict.protocol] += 1
        if verdict.escaped is not None:
            kind = f"{verdict.escaped.split(':', 1)[0]} ({verdict.protocol})"
            self.escaped[kind] += 1
            self.examples.setdefault(kind, verdict.escaped)
            return
        self.codes[verdict.code or "none"] += 1
        for problem in verdict.problems:
            kind = problem.split(":", 1)[0]
            self.problems[kind] += 1
            self.examples.setdefault(kind, problem[:300])


Runner = Callable[[Case | list[Any], Any, str], Verdict]
