"""Classify what a chat model raised: transient, provider failure, unfinished answer.

The openai and httpx classes are looked up only when those packages are already imported:
an exception can only be one of theirs if the module that raises it was loaded, so importing
this module (and the nodes that use it) never pulls in the OpenAI client.
"""

from __future__ import annotations

import sys

_TRANSIENT_OPENAI = (
    "APITimeoutError",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
)
_UNFINISHED_OPENAI = ("LengthFinishReasonError", "ContentFilterFinishReasonError")


def _classes(module: str, names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    loaded = sys.modules.get(module)
    if loaded is None:
        return ()
    return tuple(getattr(loaded, name) for name in names if hasattr(loaded, name))


def is_transient(exc: BaseException) -> bool:
    """Return True for failures worth retrying: timeouts, connection errors, 429, 5xx."""
    transient = (
        TimeoutError,
        ConnectionError,
        *_classes("openai", _TRANSIENT_OPENAI),
        *_classes("httpx", ("TransportError",)),
    )
    return isinstance(exc, transient)


def is_unfinished_answer(exc: BaseException) -> bool:
    """Return True when the answer was cut off or filtered (the value is missing)."""
    return isinstance(exc, _classes("openai", _UNFINISHED_OPENAI))


def is_provider_error(exc: BaseException) -> bool:
    """Return True for any other failure of the model provider or its transport."""
    provider = (
        OSError,
        *_classes("openai", ("OpenAIError",)),
        *_classes("httpx", ("HTTPError",)),
    )
    return isinstance(exc, provider)
