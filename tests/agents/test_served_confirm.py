"""NOEMA_CONFIRM_TOOLS: the served graphs (langgraph.json) pause before the listed tools.

End to end, through two Aegra servers: tests/scale/test_aegra_cluster.py.
"""

from __future__ import annotations

import pytest

from noema_graph.agents import graphs


def test_confirm_tools_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOEMA_CONFIRM_TOOLS", " flag_card,, move_card ")
    assert graphs._overrides() == {"confirm_tools": ("flag_card", "move_card")}


@pytest.mark.parametrize("value", [None, "", " , "])
def test_no_confirm_tools_leaves_the_agents_as_defined(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("NOEMA_CONFIRM_TOOLS", raising=False)
    else:
        monkeypatch.setenv("NOEMA_CONFIRM_TOOLS", value)
    assert graphs._overrides() == {}
