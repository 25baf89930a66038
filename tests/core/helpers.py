"""Config and tools shared by the core graph tests."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool, tool

from noema_graph.config import AgentConfig

PRICES = {"scripted": (1.0, 2.0)}  # USD per million tokens: 10 in + 5 out = 0.00002 a call


def cfg(**overrides: Any) -> AgentConfig:
    """An agent config with no toolkits and a price for the scripted model."""
    base: dict[str, Any] = {"enabled_toolkits": (), "price_overrides": PRICES, "timeout_s": 60}
    return AgentConfig(**{**base, **overrides})


CALLS: list[tuple[str, dict[str, Any]]] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    CALLS.append(("add", {"a": a, "b": b}))
    return a + b


@tool
def lookup(key: str) -> str:
    """Look up a value by key."""
    CALLS.append(("lookup", {"key": key}))
    return f"value-of-{key}"


def _explode(reason: str) -> str:
    raise RuntimeError(f"tool broke: {reason}")


explode = StructuredTool.from_function(_explode, name="explode", description="Always fails.")

TOOLS = [add, lookup, explode]
