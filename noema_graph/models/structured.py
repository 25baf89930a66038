"""Schema-constrained output for every model the factory makes.

OpenAI and llama.cpp both accept ``response_format={"type": "json_schema", ...}``; llama.cpp
compiles the schema into a grammar, so the local model cannot produce invalid JSON. Measured:
ChatOpenAI's ``with_structured_output(..., method="json_schema")`` works unchanged against
the embedded llama.cpp server, so this helper only picks the method from the model profile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # import-light: noema_graph.models imports this module eagerly
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.runnables import Runnable
    from pydantic import BaseModel


def structured(
    model: BaseChatModel, schema: type[BaseModel], *, include_raw: bool = False
) -> Runnable[LanguageModelInput, object]:
    """Return a Runnable whose output is a validated ``schema`` instance.

    Args:
        model: Any chat model; OpenAI, OpenAI-compatible and local use the ``json_schema``
            response format, other models their own default method.
        schema: The pydantic model the answer must follow.
        include_raw: Return ``{"raw": AIMessage, "parsed": schema | None,
            "parsing_error": Exception | None}`` instead, keeping usage metadata.
    """
    from noema_graph.models.profile import model_profile

    profile = model_profile(model)
    if profile.provider == "other":
        # BaseChatModel.with_structured_output rejects unknown keyword arguments.
        return model.with_structured_output(schema, include_raw=include_raw)
    return model.with_structured_output(
        schema, method=profile.structured_output_method, include_raw=include_raw
    )
