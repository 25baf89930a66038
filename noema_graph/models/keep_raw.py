"""Structured output that keeps the raw message, without LangChain's thread pools.

``with_structured_output(..., include_raw=True)`` wraps the model in a ``RunnableParallel``
and a ``RunnablePassthrough.assign`` with fallbacks; each of them starts a thread pool on a
blocking call, two fresh threads per plan or reflection. :class:`KeepRaw` calls the same
bound model and the same parser in the caller's thread (or task) and returns the same
``{"raw", "parsed", "parsing_error"}`` mapping.
"""

from __future__ import annotations

from langchain_core.language_models import BaseLanguageModel, LanguageModelInput
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSequence

Parsed = dict[str, object]
"""``{"raw": message, "parsed": value or None, "parsing_error": exception or None}``."""


class KeepRaw(Runnable[LanguageModelInput, Parsed]):
    """Run ``model`` then ``parser``; return the raw message, the parsed value or the error."""

    def __init__(
        self, model: Runnable[LanguageModelInput, object], parser: Runnable[object, object]
    ) -> None:
        """Wrap the bound ``model`` and the ``parser`` of a structured-output sequence."""
        self.model, self.parser = model, parser

    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: object
    ) -> Parsed:
        """Call the model blocking and parse its message."""
        raw = self.model.invoke(input, config, **kwargs)
        return self._parsed(raw, config)

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: object
    ) -> Parsed:
        """Await the model and parse its message."""
        raw = await self.model.ainvoke(input, config, **kwargs)
        return self._parsed(raw, config)

    def _parsed(self, raw: object, config: RunnableConfig | None) -> Parsed:
        try:
            return {"raw": raw, "parsed": self.parser.invoke(raw, config), "parsing_error": None}
        except Exception as exc:  # as with include_raw=True: the error is returned
            return {"raw": raw, "parsed": None, "parsing_error": exc}


def keep_raw(
    structured: Runnable[LanguageModelInput, object],
) -> Runnable[LanguageModelInput, object] | None:
    """Return :class:`KeepRaw` for a ``model | parser`` sequence, or None for another shape."""
    if not isinstance(structured, RunnableSequence) or len(structured.steps) < 2:
        return None
    steps = structured.steps
    if not isinstance(getattr(steps[0], "bound", steps[0]), BaseLanguageModel):
        return None  # not ``model | parser`` (e.g. already include_raw)
    parser = steps[1] if len(steps) == 2 else RunnableSequence(*steps[1:])
    return KeepRaw(steps[0], parser)
