"""What a graph needs to know about its chat model: provider, protocol, window, output method."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableBinding

from noema_graph._lazy import loaded_attr

Provider = Literal["openai", "openai-compatible", "local", "other"]
ActionProtocol = Literal["native", "react"]
StructuredOutputMethod = Literal["json_schema", "function_calling"]

PROVIDER_KEY = "noema_provider"
"""Key in ``BaseChatModel.metadata`` where :func:`make_model` records the provider."""
CONTEXT_WINDOW_KEY = "noema_context_window"
"""Key in ``BaseChatModel.metadata`` where :func:`make_model` records the context window."""
PARAMETERS_KEY = "noema_parameters"
"""Key in ``BaseChatModel.metadata`` where :func:`make_model` records a local model's size
(parameters, from its GGUF metadata)."""
PLANS_KEY = "noema_plans"
"""Key in ``BaseChatModel.metadata`` where :func:`make_model` records an explicit choice of
whether the model plans (its ``plans`` argument, else ``NOEMA_MODEL_PLANS``)."""
PLANNING_PARAMETERS = 1_000_000_000
"""A local model of at least this many parameters plans like a remote one; below, it follows
an agent's default plan (the 135M embedded model's own plans were noise,
``bench/bench_quality.py``)."""

DEFAULT_CONTEXT_WINDOW = 8192
"""Window assumed for a model missing from :data:`CONTEXT_WINDOWS`; small on purpose."""

# Longest prefix wins. Sources: the providers' model pages.
CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
}


@dataclass(frozen=True)
class ModelProfile:
    """Facts about a chat model that shape how a graph drives it.

    Attributes:
        provider: Where the model runs.
        model_name: The name sent to the provider (used for pricing).
        protocol: Default action protocol: native tool calls, or the ReAct text protocol.
        context_window: Tokens the model accepts (prompt plus answer).
        structured_output_method: ``method`` to pass to ``with_structured_output``.
        is_local: Whether the model is the embedded one, which costs nothing.
        plans: Whether the model is asked to plan (and to refine an agent's default plan);
            a small model (the embedded one) follows the agent's default plan instead. See
            :func:`model_plans`.
    """

    provider: Provider
    model_name: str
    protocol: ActionProtocol
    context_window: int
    structured_output_method: StructuredOutputMethod
    is_local: bool
    plans: bool = True


def context_window_for(model_name: str) -> int:
    """Return the window of ``model_name`` from the table, or :data:`DEFAULT_CONTEXT_WINDOW`."""
    name = model_name.rsplit("/", 1)[-1].lower()
    best = ""
    for prefix in CONTEXT_WINDOWS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return CONTEXT_WINDOWS[best] if best else DEFAULT_CONTEXT_WINDOW


def model_profile(model: BaseChatModel) -> ModelProfile:
    """Return the profile of ``model``; models not built by ``make_model`` are ``other``.

    Args:
        model: A chat model, optionally wrapped by ``.bind(...)``.
    """
    inner: object = model
    while isinstance(inner, RunnableBinding):
        inner = inner.bound
    metadata: dict[str, object] = dict(getattr(inner, "metadata", None) or {})
    name = _model_name(inner)
    provider = _provider(inner, metadata)
    window = metadata.get(CONTEXT_WINDOW_KEY)
    if not isinstance(window, int):
        window = context_window_for(name)
    if provider == "other":
        plans = model_plans(metadata, is_local=False)
        return ModelProfile("other", name, "native", window, "function_calling", False, plans)
    is_local = provider == "local"
    return ModelProfile(
        provider=provider,
        model_name=name,
        protocol="react" if is_local else "native",
        context_window=window,
        structured_output_method="json_schema",
        is_local=is_local,
        plans=model_plans(metadata, is_local=is_local),
    )


def model_plans(metadata: Mapping[str, object], *, is_local: bool) -> bool:
    """Return whether a model plans, from what ``make_model`` recorded in its metadata.

    An explicit choice (:data:`PLANS_KEY`) wins; else a remote model plans, and a local one
    when it has at least :data:`PLANNING_PARAMETERS` parameters (:data:`PARAMETERS_KEY`;
    unknown: it does not).
    """
    explicit = metadata.get(PLANS_KEY)
    if isinstance(explicit, bool):
        return explicit
    if not is_local:
        return True
    parameters = metadata.get(PARAMETERS_KEY)
    return isinstance(parameters, int) and parameters >= PLANNING_PARAMETERS


def _model_name(model: object) -> str:
    for attribute in ("model_name", "model"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def _provider(model: Any, metadata: dict[str, object]) -> Provider:
    recorded = metadata.get(PROVIDER_KEY)
    if recorded in ("openai", "openai-compatible", "local"):
        return recorded
    chat_openai = loaded_attr("langchain_openai", "ChatOpenAI")
    if chat_openai is None or not isinstance(model, chat_openai):
        return "other"
    base_url = model.openai_api_base
    if base_url is None or "api.openai.com" in base_url:
        return "openai"
    return "openai-compatible"
