"""A zero-latency scripted chat model and a 1 KB tool, shared by the framework benchmarks.

The model hands back pre-built ``AIMessage`` objects (ids and usage already set, so no
framework copies them) from a queue, instantly: N tool-call replies, then a final answer.
It supports ``bind_tools`` (returns itself) and, through LangChain's default
``with_structured_output`` (which binds the schema as a tool and parses the tool call),
structured output: a ``PlanDraft`` reply is an AIMessage calling a tool named ``PlanDraft``.

The queue is a private attribute: the shallow ``model_copy`` a framework may make
(noema_graph does, to turn streaming off for structured output) shares it with the
original, and it stays out of the model's ``repr``, which LangChain computes once per model
for tracing (as a field, the repr of N messages cost 0.1-0.4 s a run, on both sides).
"""

from __future__ import annotations

import random
import string
from collections import deque
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from pydantic import PrivateAttr

TOOL_RESULT_CHARS = 1_024
WIDE_WINDOW = 128_000
"""Context window of gpt-4o: N=200 iterations of 1 KB results fit without compaction."""
CONTEXT_WINDOW_KEY = "noema_context_window"
"""``BaseChatModel.metadata`` key noema_graph reads the window from (models/profile.py)."""
USAGE = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}


class ScriptExhausted(AssertionError):
    """The model was called more often than its script allows."""


class ZeroLatencyChatModel(BaseChatModel):
    """Return the next pre-built reply at once; raise when the script runs out."""

    model_name: str = "zero-latency"
    _replies: deque[AIMessage] = PrivateAttr(default_factory=deque[AIMessage])

    def __init__(self, replies: Sequence[AIMessage], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._replies = deque(replies)

    @property
    def _llm_type(self) -> str:
        return "zero-latency"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
        """Accept any tools; the script decides what is called."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        try:
            message = self._replies.popleft()
        except IndexError:
            raise ScriptExhausted(f"script exhausted at a prompt of {len(messages)}") from None
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def remaining(self) -> int:
        """Replies not used yet."""
        return len(self._replies)


def _reply(index: int, content: str = "", calls: list[dict[str, Any]] | None = None) -> AIMessage:
    return AIMessage(
        content=content, tool_calls=calls or [], id=f"ai-{index}", usage_metadata=USAGE.copy()
    )


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def script(n: int, *, plan: bool, context_window: int | None = WIDE_WINDOW) -> ZeroLatencyChatModel:
    """Return a model scripted for N calls of ``fetch`` then a final answer.

    Args:
        n: Tool iterations (one call of ``fetch`` per model reply, distinct arguments).
        plan: Start with a ``PlanDraft`` structured reply (noema_graph's plan node).
        context_window: Window recorded in the model's metadata where noema_graph's
            ``make_model`` records it; None leaves noema_graph's default for an unknown
            model (8,192 tokens), which 1 KB results outgrow after about 25 iterations.
    """
    replies: list[AIMessage] = []
    if plan:
        draft = {"goal": "fetch the records", "steps": ["Fetch every record."]}
        replies.append(_reply(0, calls=[_call("PlanDraft", draft, "call-plan")]))
    replies += [_reply(i + 1, calls=[_call("fetch", {"i": i}, f"call-{i}")]) for i in range(n)]
    replies.append(_reply(n + 1, content="All records fetched."))
    metadata = {CONTEXT_WINDOW_KEY: context_window} if context_window else None
    return ZeroLatencyChatModel(replies, metadata=metadata)


@tool
def fetch(i: int) -> str:
    """Fetch record i (1 KB of text)."""
    return f"record {i}: ".ljust(TOOL_RESULT_CHARS, "x")


@tool("fetch")
def fetch_text(i: int) -> str:
    """Fetch record i (1 KB of text)."""
    return text_record(i)


def text_record(i: int) -> str:
    """Return record i as 1 KB of random lowercase words (zlib saves only ~35% of it).

    Unlike :func:`fetch`'s filler, which compresses about 30x, this stands for results that
    compress as little as real tool output does or less (JSON and prose compress 2-4x).
    """
    rng = random.Random(i)
    words: list[str] = [f"record {i}:"]
    while sum(len(w) + 1 for w in words) < TOOL_RESULT_CHARS:
        words.append("".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))))
    return " ".join(words)[:TOOL_RESULT_CHARS]


def noema_config(n: int) -> Any:
    """Return the noema config of a bench run: plan, N tool iterations, then the answer."""
    from noema_graph import AgentConfig

    return AgentConfig(
        enabled_toolkits=(),
        max_iterations=n + 5,
        reflection_interval=n + 1_000,
        loop_threshold=n + 1_000,
        max_tool_calls_per_step=5,
        price_overrides={"zero-latency": (0.0, 0.0)},
    )
