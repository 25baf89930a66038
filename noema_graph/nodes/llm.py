"""Model calls shared by the nodes: one call, structured output with feedback, usage and cost.

Each helper is a node step (see :mod:`noema_graph.effects`): written once, driven sync
or async. Transient failures (timeouts, connection errors, 429, 5xx) are retried by
LangGraph: the node raises :class:`TransientModelError` and its ``RetryPolicy`` runs it again,
until the last attempt, which turns the failure into :class:`LLMError`. Anything else the
model raises (a provider error, a custom provider's exception, a ``RuntimeError``) becomes
:class:`LLMError` at once, its type and message kept and the exception chained; the nodes
record it and the routers end the run in ``finalize`` with ``error.code = "llm_error"``.

Every message a model returns passes :func:`as_ai_message` (or, for structured output,
:func:`parse_structured`) before a node keeps it: the one normalisation boundary of
:mod:`noema_graph.models.normalize`, which repairs what a careless model says (tool call ids,
names, arguments, usage counts, content, values the checkpointer cannot write) and logs it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.errors import GraphBubbleUp
from langgraph.types import RetryPolicy
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict, Unpack

from noema_graph.effects import Steps, bounded
from noema_graph.errors import LLMError, NoemaError, TransientModelError
from noema_graph.models.failures import is_provider_error, is_transient, is_unfinished_answer
from noema_graph.models.local import server_at
from noema_graph.models.normalize import normalize_message, normalize_usage
from noema_graph.models.plain import plain_model, safe_repr, safe_str
from noema_graph.models.prefix_cache import PrefixCache
from noema_graph.nodes.common import ctx
from noema_graph.nodes.deps import AgentDeps, ChatRunnable, NodeRuntime
from noema_graph.prompts import stable_prefix
from noema_graph.state.models import Usage
from noema_graph.state.reducers import fold_items

logger = logging.getLogger(__name__)

STRUCTURED_ERRORS: tuple[type[BaseException], ...] = (ValidationError, OutputParserException)
"""What a structured-output wrapper raises for an answer that is not the schema."""
FEEDBACK_CHARS = 2_000
"""Characters of a rejected structured answer sent back to the model."""

ModelT = TypeVar("ModelT", bound=BaseModel)


class RequestOptions(TypedDict, total=False):
    """Per-request options of a model call (see :func:`request_options`)."""

    timeout: float


def retry_policy(deps: AgentDeps) -> RetryPolicy:
    """Return the node retry policy for transient model errors (``model_retries`` attempts)."""
    return RetryPolicy(
        initial_interval=0.5,
        max_attempts=deps.config.model_retries,
        retry_on=TransientModelError,
    )


def _attempt(runtime: NodeRuntime) -> int:
    info = getattr(runtime, "execution_info", None)
    return int(getattr(info, "node_attempt", 1) or 1)


def usage_of(message: BaseMessage, deps: AgentDeps) -> Usage:
    """Return tokens and cost of one model response from its ``usage_metadata``.

    Counts that are not believable (text, negative, huge) count as 0 (see
    :func:`~noema_graph.models.normalize.normalize_usage`).
    """
    meta = normalize_usage(getattr(message, "usage_metadata", None))[0] or {}
    prompt, completion = int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    total = int(meta.get("total_tokens", prompt + completion))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        cost_usd=deps.cost(prompt, completion),
        model_calls=1,
    )


def used_call_ids(messages: Iterable[object]) -> AbstractSet[str]:
    """Return the tool-call ids of the AI messages among ``messages`` (the thread so far).

    On a history the reducers returned, the ids are folded as it grows, not rescanned, and
    the set returned is the fold's own: read it, do not change it (a copy per call would
    cost the whole thread's ids at every step).
    """
    if isinstance(messages, Sequence):
        return fold_items(messages, "call_ids", set[str], _add_call_ids, set)
    ids: set[str] = set()
    for message in messages:
        _add_call_ids(ids, message)
    return ids


def _add_call_ids(ids: set[str], message: object) -> None:
    if isinstance(message, AIMessage):
        ids.update(str(c.get("id")) for c in message.tool_calls)


def as_ai_message(response: object, used: Collection[str] = ()) -> AIMessage:
    """Return a chat model response as an AIMessage fit for state: the normalisation boundary.

    Whatever the model returned, the message has text or plain blocks as content, tool
    calls with unique text ids, text names and dict arguments (unusable arguments are marked
    for the tool node to answer with an error), believable usage counts, and only values the
    checkpointer can write. A call id among ``used`` (the thread's earlier calls) is renamed,
    so one id (a tool-ledger key) names one call. What had to be repaired is logged.
    """
    normalized = normalize_message(response, used)
    if normalized.repairs:
        logger.warning("model message repaired: %s", "; ".join(normalized.repairs)[:2_000])
    return normalized.message


def _passes_through(exc: Exception, answer_errors: tuple[type[BaseException], ...]) -> bool:
    """Return True for what call_model must not turn into a model failure.

    Our own errors (a cancel, a retry), LangGraph's control flow (an interrupt), a test's
    failed assertion (a strict scripted model out of script), an unfinished answer and the
    caller's ``answer_errors`` (a structured answer that is not the schema).
    """
    own = (NoemaError, GraphBubbleUp, AssertionError, *answer_errors)
    return isinstance(exc, own) or is_unfinished_answer(exc)


def chat_model_of(runnable: object) -> BaseChatModel | None:
    """Return the chat model inside ``runnable`` (bindings, sequences, KeepRaw), if any."""
    seen = 0
    while runnable is not None and seen < 8:
        if isinstance(runnable, BaseChatModel):
            return runnable
        runnable = (
            getattr(runnable, "bound", None)
            or getattr(runnable, "model", None)
            or (getattr(runnable, "first", None))
        )
        seen += 1
    return None


def request_options(runnable: object, deadline: float | None) -> RequestOptions:
    """Return per-request options: the HTTP timeout of the run's deadline for OpenAI clients.

    The bounded call stops waiting at the deadline on its own; the timeout also makes the
    OpenAI client close the connection then, so the server (the embedded llama.cpp one, or
    any OpenAI-compatible endpoint) stops working on a request no one will read, on the sync
    path too, where the abandoned call would otherwise run to its end in a worker thread.
    """
    if deadline is None:
        return {}
    openai = sys.modules.get("langchain_openai.chat_models.base")
    model = chat_model_of(runnable)
    if openai is None or not isinstance(model, openai.BaseChatOpenAI):
        return {}
    return {"timeout": max(deadline - time.monotonic(), 0.001)}


def prefix_cache_of(runnable: object) -> PrefixCache | None:
    """Return the saved-prefix cache of the embedded server ``runnable`` calls, if any."""
    model = chat_model_of(runnable)
    server = server_at(getattr(model, "openai_api_base", None)) if model is not None else None
    return server.prefix_cache if server is not None else None


def _invoke(
    runnable: ChatRunnable,
    messages: list[BaseMessage],
    prefix: str,
    **options: Unpack[RequestOptions],
) -> object:
    cache = prefix_cache_of(runnable) if prefix else None
    if cache is not None:
        cache.ensure(prefix)
    return runnable.invoke(messages, **options)


async def _ainvoke(
    runnable: ChatRunnable,
    messages: list[BaseMessage],
    prefix: str,
    **options: Unpack[RequestOptions],
) -> object:
    cache = prefix_cache_of(runnable) if prefix else None
    if cache is not None:
        await asyncio.to_thread(cache.ensure, prefix)
    return await runnable.ainvoke(messages, **options)


def call_model(
    runnable: ChatRunnable,
    prompt: Sequence[BaseMessage],
    runtime: NodeRuntime,
    deps: AgentDeps,
    *,
    answer_errors: tuple[type[BaseException], ...] = (),
    prefix: str | None = None,
) -> Steps[object]:
    """Call ``runnable`` once on ``prompt``; return its response.

    On the embedded model, the prompt's stable prefix (``prefix``: text the system message
    opens with that holds nothing of the request; by default
    :func:`~noema_graph.prompts.stable_prefix` of the agent's instructions) is first put in
    the server's slot from its saved file (:mod:`noema_graph.models.prefix_cache`).

    Raises:
        TransientModelError: A transient failure while attempts remain (LangGraph retries).
        LLMError: The model failed for good: a transient failure on the last attempt, or any
            other exception it raised (its type and message kept, the exception chained).
        Cancelled: The run was aborted during the call.
    """
    messages = list(prompt)
    context = ctx(runtime)
    options = request_options(runnable, context.deadline)
    prefix = stable_prefix(deps.config.instructions) if prefix is None else prefix
    try:
        return (
            yield bounded(
                lambda: _invoke(runnable, messages, prefix, **options),
                lambda: _ainvoke(runnable, messages, prefix, **options),
                context,
            )
        )
    except Exception as exc:
        if _passes_through(exc, answer_errors):
            raise
        if is_transient(exc):
            attempt, attempts = _attempt(runtime), deps.config.model_retries
            if attempt < attempts:
                raise TransientModelError(
                    f"attempt {attempt}/{attempts}: {safe_repr(exc)}"
                ) from exc
            raise LLMError(
                f"model call failed after {attempts} attempts: {safe_repr(exc)}"
            ) from exc
        if not is_provider_error(exc):  # not a known transport error: say where it came from
            logger.warning("the model raised %s; the run ends with llm_error", type(exc).__name__)
        raise LLMError(f"model call failed: {safe_repr(exc)[:1_000]}") from exc


def parse_structured(
    response: object, schema: type[ModelT], deps: AgentDeps
) -> tuple[ModelT | None, Usage, str | None]:
    """Split an ``include_raw`` structured response into (parsed, usage, error)."""
    if not isinstance(response, dict):
        return None, Usage(), f"unexpected structured response {type(response).__name__}"
    raw = response.get("raw")
    usage = (
        usage_of(as_ai_message(_unparsed(raw)), deps) if isinstance(raw, BaseMessage) else Usage()
    )
    parsed = response.get("parsed")
    error: object = response.get("parsing_error")
    if isinstance(parsed, dict):
        try:
            parsed = schema.model_validate(parsed)
        except ValidationError as exc:
            error = exc
    if isinstance(parsed, schema):
        kept = plain_model(parsed)  # e.g. lone surrogates from JSON escapes, kept out of state
        if kept is not None:
            return kept, usage, None
        error = "a value cannot be stored (text that is not valid UTF-8, or a huge number)"
    return None, usage, f"invalid {schema.__name__}: {safe_str(error)}"


def _unparsed(raw: BaseMessage) -> BaseMessage:
    """Return ``raw`` without the parsed object ChatOpenAI's json_schema mode keeps in it.

    That object is ``response["parsed"]`` already; left in ``additional_kwargs`` it would be
    "repaired" (made plain) with a warning on every structured call.
    """
    extra = raw.additional_kwargs
    if "parsed" not in extra:
        return raw
    return raw.model_copy(
        update={"additional_kwargs": {k: v for k, v in extra.items() if k != "parsed"}}
    )


def feedback(response: object, error: str, schema: type[BaseModel]) -> list[BaseMessage]:
    """Return the rejected answer and why it was rejected, to send back to the model."""
    raw = response.get("raw") if isinstance(response, dict) else None
    said = ""
    if isinstance(raw, AIMessage):
        message = normalize_message(_unparsed(raw)).message  # parse_structured logged repairs
        said = message.text or "".join(json.dumps(c["args"]) for c in message.tool_calls)
    rejected = [AIMessage(content=said[:FEEDBACK_CHARS])] if said else []
    return [
        *rejected,
        HumanMessage(
            f"That answer is not valid {schema.__name__}: {error[:1_000]}\n"
            f"Answer again with {schema.__name__} JSON that fixes this."
        ),
    ]


def ask_structured(
    model: BaseChatModel,
    schema: type[ModelT],
    prompt: Sequence[BaseMessage],
    runtime: NodeRuntime,
    deps: AgentDeps,
    *,
    attempts: int,
    prefix: str | None = None,
) -> Steps[tuple[ModelT | None, Usage, list[str]]]:
    """Ask for ``schema`` up to ``attempts`` times; return (value or None, usage, errors).

    A reply that does not validate is sent back with the validation error, so the next
    attempt can fix it (the question is not simply repeated). ``prefix``: as
    :func:`call_model`'s.
    """
    runnable = deps.structured(model, schema)
    messages, usage, errors = list(prompt), Usage(), list[str]()
    for _ in range(attempts):
        try:
            response = yield from call_model(
                runnable, messages, runtime, deps, answer_errors=STRUCTURED_ERRORS, prefix=prefix
            )
        except NoemaError:  # a failed provider, a retry or a cancel is not a bad answer
            raise
        except STRUCTURED_ERRORS as exc:
            errors.append(safe_repr(exc))
            continue
        except Exception as exc:
            if not is_unfinished_answer(exc):
                raise
            errors.append(safe_repr(exc))
            continue
        value, used, error = parse_structured(response, schema, deps)
        usage = usage + used
        if value is not None:
            return value, usage, errors
        errors.append(error or "no value")
        messages = [*prompt, *feedback(response, error or "no value", schema)]
    return None, usage, errors


Asked = tuple[ModelT | None, Usage, list[str]] | LLMError
"""What :func:`ask_or_error` returns: :func:`ask_structured`'s answer, or why the model failed."""


def ask_or_error(
    model: BaseChatModel,
    schema: type[ModelT],
    prompt: Sequence[BaseMessage],
    runtime: NodeRuntime,
    deps: AgentDeps,
) -> Steps[Asked[ModelT]]:
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
