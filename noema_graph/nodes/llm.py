"""Model calls shared by the nodes: one call, structured output with feedback, usage and cost.

Each helper is a node step (see :mod:`noema_graph.effects`): written once, driven sync
or async. Transient failures (timeouts, connection errors, 429, 5xx) are retried by
LangGraph: the node raises :class:`TransientModelError` and its ``RetryPolicy`` runs it again,
until the last attempt, which turns the failure into :class:`LLMError`. Anything else the
provider raises becomes :class:`LLMError` at once; the nodes record it and the routers end the
run in ``finalize`` with ``error.code = "llm_error"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy
from pydantic import BaseModel, ValidationError

from noema_graph.effects import Steps, bounded
from noema_graph.errors import LLMError, NoemaError, TransientModelError
from noema_graph.models.errors import is_provider_error, is_transient, is_unfinished_answer
from noema_graph.nodes.common import ctx
from noema_graph.nodes.deps import AgentDeps
from noema_graph.state.models import Usage

STRUCTURED_ERRORS: tuple[type[BaseException], ...] = (
    ValidationError,
    OutputParserException,
    ValueError,
    KeyError,
)
"""What a structured-output wrapper raises for an answer that is not the schema."""


def retry_policy(deps: AgentDeps) -> RetryPolicy:
    """Return the node retry policy for transient model errors (``model_retries`` attempts)."""
    return RetryPolicy(
        initial_interval=0.5,
        max_attempts=deps.config.model_retries,
        retry_on=TransientModelError,
    )


def _attempt(runtime: Runtime[Any]) -> int:
    info = getattr(runtime, "execution_info", None)
    return int(getattr(info, "node_attempt", 1) or 1)


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


def as_ai_message(response: Any) -> AIMessage:
    """Coerce a chat model response to an AIMessage."""
    if isinstance(response, AIMessage):
        return response
    return AIMessage(content=str(response))


def call_model(
    runnable: Runnable[Any, Any],
    prompt: Sequence[BaseMessage],
    runtime: Runtime[Any],
    deps: AgentDeps,
) -> Steps[Any]:
    """Call ``runnable`` once on ``prompt``; return its response.

    Raises:
        TransientModelError: A transient failure while attempts remain (LangGraph retries).
        LLMError: The provider failed for good.
        Cancelled: The run was aborted during the call.
    """
    messages = list(prompt)
    try:
        return (
            yield bounded(
                lambda: runnable.invoke(messages),
                lambda: runnable.ainvoke(messages),
                ctx(runtime),
            )
        )
    except Exception as exc:
        if is_unfinished_answer(exc):
            raise
        if is_transient(exc):
            attempt, attempts = _attempt(runtime), deps.config.model_retries
            if attempt < attempts:
                raise TransientModelError(f"attempt {attempt}/{attempts}: {exc!r}") from exc
            raise LLMError(f"model call failed after {attempts} attempts: {exc!r}") from exc
        if is_provider_error(exc):
            raise LLMError(f"model call failed: {exc!r}") from exc
        raise


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
    return None, usage, f"invalid {schema.__name__}: {error}"


def feedback(response: Any, error: str, schema: type[BaseModel]) -> list[BaseMessage]:
    """Return the rejected answer and why it was rejected, to send back to the model."""
    raw = response.get("raw") if isinstance(response, dict) else None
    said = ""
    if isinstance(raw, AIMessage):
        said = raw.text or "".join(json.dumps(c["args"], default=str) for c in raw.tool_calls)
    rejected = [AIMessage(content=said)] if said else []
    return [
        *rejected,
        HumanMessage(
            f"That answer is not valid {schema.__name__}: {error[:1_000]}\n"
            f"Answer again with {schema.__name__} JSON that fixes this."
        ),
    ]


def ask_structured(
    model: BaseChatModel,
    schema: type[BaseModel],
    prompt: Sequence[BaseMessage],
    runtime: Runtime[Any],
    deps: AgentDeps,
    *,
    attempts: int,
) -> Steps[tuple[BaseModel | None, Usage, list[str]]]:
    """Ask for ``schema`` up to ``attempts`` times; return (value or None, usage, errors).

    A reply that does not validate is sent back with the validation error, so the next
    attempt can fix it (the question is not simply repeated).
    """
    runnable = deps.structured(model, schema)
    messages, usage, errors = list(prompt), Usage(), list[str]()
    for _ in range(attempts):
        try:
            response = yield from call_model(runnable, messages, runtime, deps)
        except NoemaError:  # a failed provider, a retry or a cancel is not a bad answer
            raise
        except STRUCTURED_ERRORS as exc:
            errors.append(repr(exc))
            continue
        except Exception as exc:
            if not is_unfinished_answer(exc):
                raise
            errors.append(repr(exc))
            continue
        value, used, error = parse_structured(response, schema, deps)
        usage = usage + used
        if value is not None:
            return value, usage, errors
        errors.append(error or "no value")
        messages = [*prompt, *feedback(response, error or "no value", schema)]
    return None, usage, errors


Asked = tuple[BaseModel | None, Usage, list[str]] | LLMError
"""What :func:`ask_or_error` returns: :func:`ask_structured`'s answer, or why the model failed."""


def ask_or_error(
    model: BaseChatModel,
    schema: type[BaseModel],
    prompt: Sequence[BaseMessage],
    runtime: Runtime[Any],
    deps: AgentDeps,
) -> Steps[Asked]:
    """Ask for ``schema`` in ``plan_retries`` attempts; a failed model is returned, not raised.

    For the nodes that record a model failure as an error step and let the routers end the
    run (plan, reflect, revise_plan).
    """
    try:
        return (
            yield from ask_structured(
                model, schema, prompt, runtime, deps, attempts=deps.config.plan_retries
            )
        )
    except LLMError as exc:
        return exc
