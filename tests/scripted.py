"""One strict scripted chat model for deterministic tests.

It supports ``bind_tools`` and ``with_structured_output`` (through LangChain's default, which
binds the schema as a tool), records every prompt, raises when its script runs out, and
``assert_complete()`` checks that every scripted reply was consumed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any
from uuid import uuid4

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

Reply = AIMessage | BaseException | Callable[[list[BaseMessage]], AIMessage]


class ScriptExhausted(AssertionError):
    """The model was called more times than its script allows."""


class ScriptedChatModel(BaseChatModel):
    """Replays a fixed script of replies; anything unexpected fails the test."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    model_name: str = "scripted"
    script: list[Any]
    prompt_tokens: int = 10
    completion_tokens: int = 5
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _prompts: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _bound: list[list[str]] = PrivateAttr(default_factory=list)
    _schemas: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def prompts(self) -> list[list[BaseMessage]]:
        """Every prompt the model received, in order."""
        return self._prompts

    @property
    def bound_tool_names(self) -> list[list[str]]:
        """Tool names of every bind_tools call, in order."""
        return self._bound

    @property
    def bound_schemas(self) -> list[dict[str, Any]]:
        """The JSON schema of every tool bound so far (a structured output's too), in order."""
        return self._schemas

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self._schemas.extend(convert_to_openai_tool(t)["function"] for t in tools)
        names = []
        for tool in tools:
            if isinstance(tool, BaseTool):
                names.append(tool.name)
            elif isinstance(tool, dict):
                names.append(str(tool.get("name") or tool.get("function", {}).get("name")))
            else:
                names.append(getattr(tool, "__name__", str(tool)))
        self._bound.append(names)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._prompts.append(list(messages))
            if not self.script:
                last = messages[-1].content if messages else ""
                raise ScriptExhausted(
                    f"script exhausted; unexpected call #{len(self._prompts)}: {str(last)[:200]!r}"
                )
            reply = self.script.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        message = reply(list(messages)) if callable(reply) else reply
        if message.usage_metadata is None:
            message = message.model_copy(
                update={
                    "usage_metadata": {
                        "input_tokens": self.prompt_tokens,
                        "output_tokens": self.completion_tokens,
                        "total_tokens": self.prompt_tokens + self.completion_tokens,
                    }
                }
            )
        if message.id is None:
            message = message.model_copy(update={"id": f"ai-{uuid4().hex[:8]}"})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def assert_complete(self) -> None:
        assert not self.script, f"{len(self.script)} scripted replies were never used"


def call(
    name: str, args: dict[str, Any] | None = None, call_id: str | None = None
) -> dict[str, Any]:
    """Return a tool call dict."""
    return {
        "name": name,
        "args": args or {},
        "id": call_id or f"call_{uuid4().hex[:8]}",
        "type": "tool_call",
    }


def tools_reply(*calls: dict[str, Any], content: str = "") -> AIMessage:
    """An AI reply that calls tools."""
    return AIMessage(content=content, tool_calls=list(calls))


def structured(schema: str, **args: Any) -> AIMessage:
    """An AI reply that fills ``schema`` through LangChain's tool-calling structured output."""
    return AIMessage(content="", tool_calls=[call(schema, args)])


def plan_reply(*steps: str, goal: str = "the goal") -> AIMessage:
    return structured("PlanDraft", goal=goal, steps=list(steps))


def reflection_reply(decision: str, reason: str = "because") -> AIMessage:
    return structured(
        "Reflection", progress="some", remaining="rest", decision=decision, reason=reason
    )


def text(content: str) -> AIMessage:
    return AIMessage(content=content)
