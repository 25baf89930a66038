"""The node update types name exactly the channels of the state they update."""

from __future__ import annotations

from typing import get_type_hints

from noema_graph.state.agent import (
    AgentState,
    AgentUpdate,
    AskState,
    AskUpdate,
    ToolUpdate,
)


def _keys(schema: type) -> set[str]:
    return set(get_type_hints(schema))


def test_ask_update_covers_the_ask_state() -> None:
    assert _keys(AskUpdate) == _keys(AskState)


def test_agent_update_covers_the_agent_state_but_managed_values() -> None:
    assert _keys(AgentUpdate) == _keys(AgentState) - {"remaining_steps"}


def test_tool_update_writes_agent_state_channels_only() -> None:
    assert _keys(ToolUpdate) <= _keys(AgentState)
    assert not AgentUpdate.__required_keys__ and not ToolUpdate.__required_keys__
