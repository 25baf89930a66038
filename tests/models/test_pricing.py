from __future__ import annotations

import logging
import uuid

import pytest

from noema_graph.models import estimate_cost_usd


def test_known_openai_model_costs_a_positive_amount() -> None:
    cost = estimate_cost_usd("gpt-4o-mini", "openai", 1_000_000, 1_000_000)
    assert cost == pytest.approx(0.15 + 0.60)


def test_dated_openai_model_is_known() -> None:
    cost = estimate_cost_usd("gpt-4o-2024-08-06", "openai", 1000, 500)
    assert cost is not None
    assert cost > 0


def test_override_wins_over_database() -> None:
    overrides = {"gpt-4o-mini": (1.0, 2.0)}
    assert estimate_cost_usd("gpt-4o-mini", "openai", 1_000_000, 500_000, overrides) == 2.0


def test_provider_qualified_override() -> None:
    overrides = {"openai-compatible:qwen": (0.5, 0.5)}
    assert estimate_cost_usd("qwen", "openai-compatible", 2_000_000, 0, overrides) == 1.0


def test_local_model_is_free() -> None:
    assert estimate_cost_usd("smollm2-135m-instruct", "local", 10_000, 10_000) == 0.0


def test_unknown_model_is_none_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    name = f"no-such-model-{uuid.uuid4().hex}"
    with caplog.at_level(logging.WARNING, logger="noema_graph.models.pricing"):
        assert estimate_cost_usd(name, "openai", 10, 10) is None
        assert estimate_cost_usd(name, "openai", 10, 10) is None
    warnings = [r for r in caplog.records if name in r.getMessage()]
    assert len(warnings) == 1
    assert "price_overrides" in warnings[0].getMessage()


def test_openai_compatible_without_host_is_not_guessed(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="noema_graph.models.pricing"):
        assert estimate_cost_usd("gpt-4o-mini", "openai-compatible", 10, 10) is None


def test_openai_compatible_with_host_prefix_is_priced() -> None:
    cost = estimate_cost_usd("openai/gpt-4o-mini", "openai-compatible", 1_000_000, 0)
    assert cost == pytest.approx(0.15)
