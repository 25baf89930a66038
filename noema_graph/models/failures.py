"""Classify model-call failures (transient, provider, unfinished answer) without importing openai.

An exception can only be an ``openai`` (or ``httpx``) error if that library has been
imported, so each check looks the classes up in ``sys.modules`` at call time
(:func:`~noema_graph._lazy.loaded_attr`) and never imports anything itself: importing
``noema_graph`` stays free of the OpenAI client until a model is made.

The three predicates split every exception:

* :func:`is_transient`: worth retrying (timeouts, connection errors, 429, 5xx);
* :func:`is_unfinished_answer`: the model stopped (length limit, content filter) so the
  structured value is missing; the provider did not fail;
* :func:`is_provider_error`: any other failure of the provider or the transport (4xx,
  authentication, a refused connection after the retries); wrap it in ``LLMError``.

Anything else (``ValueError`` from a parser, a bug) is none of the three and should propagate.
``is_transient`` suits ``langgraph.types.RetryPolicy(retry_on=is_transient)``.
"""

from __future__ import annotations

from noema_graph._lazy import loaded_attr

_TRANSIENT_BUILTINS: tuple[type[BaseException], ...] = (TimeoutError, ConnectionError)
_TRANSIENT_OPENAI = (
    "APITimeoutError",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
)
_UNFINISHED_OPENAI = ("LengthFinishReasonError", "ContentFilterFinishReasonError")


def _classes(module: str, names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    """Return the exception classes ``module.<name>`` if ``module`` is already imported."""
    found = (loaded_attr(module, name) for name in names)
    return tuple(c for c in found if isinstance(c, type) and issubclass(c, BaseException))


def is_unfinished_answer(exc: BaseException) -> bool:
    """Return True when the model stopped early (length limit or content filter).

    The answer is incomplete, not the provider broken: callers asking for structured output
    treat it as a missing value (and may ask again), never as a retryable transport error.
    """
    return isinstance(exc, _classes("openai", _UNFINISHED_OPENAI))


def is_transient(exc: BaseException) -> bool:
    """Return True when retrying the same call may succeed.

    Timeouts and connection errors (built-in, ``openai`` and ``httpx.TransportError``), rate
    limits (429) and server errors (5xx).
    """
    transient = (
        *_TRANSIENT_BUILTINS,
        *_classes("openai", _TRANSIENT_OPENAI),
        *_classes("httpx", ("TransportError",)),
    )
    return isinstance(exc, transient)


def is_provider_error(exc: BaseException) -> bool:
    """Return True for a failure of the model provider or its transport.

    Any ``openai.OpenAIError`` except an unfinished answer (see
    :func:`is_unfinished_answer`), any ``httpx.HTTPError`` and any ``OSError``. Transient
    errors are provider errors too: check :func:`is_transient` first to retry them.
    """
    if is_unfinished_answer(exc):
        return False
    provider = (OSError, *_classes("openai", ("OpenAIError",)), *_classes("httpx", ("HTTPError",)))
    return isinstance(exc, provider)
