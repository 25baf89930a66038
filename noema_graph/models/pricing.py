"""USD cost of model calls from the maintained ``genai-prices`` database; never a guess.

The price data ships inside the ``genai-prices`` wheel; nothing here touches the network.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping

from genai_prices import Usage, calc_price

logger = logging.getLogger(__name__)

_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def estimate_cost_usd(
    model_name: str,
    provider: str,
    input_tokens: int,
    output_tokens: int,
    overrides: Mapping[str, tuple[float, float]] | None = None,
) -> float | None:
    """Return the USD cost of one call, or None when the price is unknown.

    Lookup order: ``overrides`` (key ``"<provider>:<model>"`` or ``"<model>"``, values in USD
    per million input and output tokens), then 0.0 for the local model, then genai-prices.
    ``openai-compatible`` servers are priced only by override or a ``"<provider>/<model>"``
    name, because the same model name costs differently at every host. An unknown model
    logs one warning per model and returns None; the caller decides what no price means.

    Args:
        model_name: Model name as sent to the provider.
        provider: ``ModelProfile.provider``: openai, openai-compatible, local or other.
        input_tokens: Prompt tokens of the call.
        output_tokens: Completion tokens of the call.
        overrides: Prices that win over the database.
    """
    if overrides:
        price = overrides.get(f"{provider}:{model_name}") or overrides.get(model_name)
        if price is not None:
            per_input, per_output = price
            return (input_tokens * per_input + output_tokens * per_output) / 1_000_000
    if provider == "local":
        return 0.0
    provider_id, model_ref = _lookup_key(model_name, provider)
    if model_ref is None:
        _warn_unknown(model_name, provider)
        return None
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    try:
        calculation = calc_price(usage, model_ref, provider_id=provider_id)
    except LookupError:
        _warn_unknown(model_name, provider)
        return None
    return float(calculation.total_price)


def _lookup_key(model_name: str, provider: str) -> tuple[str | None, str | None]:
    """Return the (provider_id, model_ref) to look up, or a None model_ref to give up."""
    if provider == "openai":
        return "openai", model_name
    if provider == "openai-compatible":
        host, sep, model = model_name.partition("/")
        return (host, model) if sep and model else (None, None)
    return None, model_name


def _warn_unknown(model_name: str, provider: str) -> None:
    key = (provider, model_name)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    logger.warning(
        "no price known for model %r (provider %r); its cost is reported as unknown. "
        "Set price_overrides={%r: (usd_per_million_input, usd_per_million_output)}.",
        model_name,
        provider,
        model_name,
    )
