"""Model calls shared by the nodes: retries, usage, cost and structured output.

Transient failures (timeouts, connection errors, 429, 5xx) are retried with exponential
backoff and jitter; anything else the provider raises becomes :class:`LLMError`, which the
nodes turn into ``output.error.code = "llm_error"``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

import httpx
import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, ValidationError

from noema_graph.errors import LLMError
from noema_graph.nodes.deps import AgentDeps
from noema_graph.state.models import Usage

logger = logging.getLogger(__name__)

TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TimeoutError,
    ConnectionError,
    openai.APITimeoutError,
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
    httpx.TransportError,
)
PROVIDER_ERRORS: tuple[type[BaseException], ...] = (openai.OpenAIError, httpx.HTTPError, OSError)
# The answer was cut off or filtered: the structured value is missing, not the provider.
UNFINISHED_ANSWER: tuple[type[BaseException], ...] = (
    openai.LengthFinishReasonError,
    openai.ContentFilterFinishReasonError,
)
STRUCTURED_ERRORS: tuple[type[BaseException], ...] = (
    *UNFINISHED_ANSWER,
    ValidationError,
    OutputParserException,
    ValueError,
    KeyError,
)
BASE_DELAY_S = 0.5


def backoff_delay(attempt: int) -> float:
    """Return the delay before retry ``attempt`` (1-based): exponential with full jitter."""
    return random.uniform(0, BASE_DELAY_S * 2 ** (attempt - 1))


def usage_of(message: BaseMessage, deps: AgentDeps) -> Usage:
    """Return tokens and cost of one model response from its ``usage_metadata``."""
    meta = getattr(message, "usage_metadata", None) or {}
    prompt = int(meta.get("input_tokens", 0))
    completion = int(meta.get("output_tokens", 0))
    total = int(meta.get("total_tokens", prompt + completion))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cost_usd=deps.cost(prompt, completion),
        model_calls=1,
    )


def invoke_with_retries(
    runnable: Runnable[Any, Any], prompt: Sequence[BaseMessage], *, attempts: int
) -> Any:
    """Invoke ``runnable``, retrying transient errors; raise LLMError otherwise."""
    for attempt in range(1, attempts + 1):
        try:
            return runnable.invoke(list(prompt))
        except TRANSIENT_ERRORS as exc:
            if attempt == attempts:
                raise LLMError(f"model call failed after {attempts} attempts: {exc!r}") from exc
            logger.info("transient model error (attempt %d): %r", attempt, exc)
            time.sleep(backoff_delay(attempt))
        except UNFINISHED_ANSWER:
            raise
        except PROVIDER_ERRORS as exc:
            raise LLMError(f"model call failed: {exc!r}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


async def ainvoke_with_retries(
    runnable: Runnable[Any, Any], prompt: Sequence[BaseMessage], *, attempts: int
) -> Any:
    """Async twin of :func:`invoke_with_retries`."""
    for attempt in range(1, attempts + 1):
        try:
            return await runnable.ainvoke(list(prompt))
        except TRANSIENT_ERRORS as exc:
            if attempt == attempts:
                raise LLMError(f"model call failed after {attempts} attempts: {exc!r}") from exc
            logger.info("transient model error (attempt %d): %r", attempt, exc)
            await asyncio.sleep(backoff_delay(attempt))
        except UNFINISHED_ANSWER:
            raise
        except PROVIDER_ERRORS as exc:
            raise LLMError(f"model call failed: {exc!r}") from exc
    raise AssertionError("unreachable")  # pragma: no cover


def as_ai_message(response: Any) -> AIMessage:
    """Coerce a chat model response to an AIMessage."""
    if isinstance(response, AIMessage):
        return response
    return AIMessage(content=str(response))


def structured_runnable(
    model: BaseChatModel, schema: type[BaseModel], deps: AgentDeps
) -> Runnable[Any, Any]:
    """Return ``model`` asked for ``schema``, keeping the raw message for its usage."""
    return deps.structured(model, schema)


def parse_structured(
    response: Any, schema: type[BaseModel], deps: AgentDeps
) -> tuple[BaseModel | None, Usage, str | None]:
    """Split an ``include_raw`` structured response into (parsed, usage, error)."""
    if not isinstance(response, dict):
        return None, Usage(), f"unexpected structured response {type(response).__name__}"
    raw = response.get("raw")
    usage = usage_of(raw, deps) if isinstance(raw, BaseMessage) else Usage()
    parsed = response.get("parsed")
    error = response.get("parsing_error")
    if isinstance(parsed, schema):
        return parsed, usage, None
    if isinstance(parsed, dict):
        try:
            return schema.model_validate(parsed), usage, None
        except ValidationError as exc:
            error = exc
    return None, usage, f"invalid {schema.__name__}: {error!r}"


def ask_structured(
    model: BaseChatModel,
    schema: type[BaseModel],
    prompt: Sequence[BaseMessage],
    deps: AgentDeps,
    *,
    attempts: int,
) -> tuple[BaseModel | None, Usage, list[str]]:
    """Ask for ``schema`` up to ``attempts`` times; return (value or None, usage, errors)."""
    runnable = structured_runnable(model, schema, deps)
    usage, errors = Usage(), []
    for _ in range(attempts):
        try:
            response = invoke_with_retries(runnable, prompt, attempts=deps.config.model_retries)
        except STRUCTURED_ERRORS as exc:
            errors.append(repr(exc))
            continue
        value, used, error = parse_structured(response, schema, deps)
        usage = usage + used
        if value is not None:
            return value, usage, errors
        errors.append(error or "no value")
    return None, usage, errors


async def aask_structured(
    model: BaseChatModel,
    schema: type[BaseModel],
    prompt: Sequence[BaseMessage],
    deps: AgentDeps,
    *,
    attempts: int,
) -> tuple[BaseModel | None, Usage, list[str]]:
    """Async twin of :func:`ask_structured`."""
    runnable = structured_runnable(model, schema, deps)
    usage, errors = Usage(), []
    for _ in range(attempts):
        try:
            response = await ainvoke_with_retries(
                runnable, prompt, attempts=deps.config.model_retries
            )
        except STRUCTURED_ERRORS as exc:
            errors.append(repr(exc))
            continue
        value, used, error = parse_structured(response, schema, deps)
        usage = usage + used
        if value is not None:
            return value, usage, errors
        errors.append(error or "no value")
    return None, usage, errors
