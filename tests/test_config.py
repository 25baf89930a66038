"""AgentConfig: defaults, ask-mode overrides, errors that name the field."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from noema_graph import AgentConfig, ConfigurationError, MCPServer


def test_defaults_follow_the_design() -> None:
    config = AgentConfig()
    assert (
        config.mode,
        config.max_iterations,
        config.max_tool_calls_per_step,
        config.reflection_interval,
    ) == ("agent", 25, 16, 3)
    assert config.tool_call_overflow == "queue"
    assert config.enabled_toolkits == ("search", "bash", "python_executor", "file_edit")
    assert set(config.permissions) == {"fs:read", "fs:write", "net:outbound", "shell:execute"}
    assert config.persist_memory is True


def test_ask_mode_is_forced_read_only() -> None:
    config = AgentConfig(
        mode="ask",
        max_iterations=9,
        enabled_toolkits=("bash",),
        permissions=("shell:execute",),
        persist_memory=True,
    )
    assert (
        config.max_iterations,
        config.enabled_toolkits,
        config.permissions,
        config.persist_memory,
    ) == (1, (), (), False)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_iterations": 0}, "max_iterations"),
        ({"timeout_s": -1}, "timeout_s"),
        ({"mode": "chat"}, "mode"),
        ({"permissions": ("fs:delete",)}, "permissions"),
        ({"enabled_toolkits": ("web",)}, "enabled_toolkits"),
        ({"max_cost_usd": -0.1}, "max_cost_usd"),
        ({"output_schema": dict}, "output_schema"),
        ({"unknown_field": 1}, "unknown_field"),
        ({"mcp_servers": [{"name": "x"}]}, "mcp_servers"),
    ],
)
def test_bad_values_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        AgentConfig(**kwargs)  # type: ignore[arg-type]
    assert info.value.field.startswith(field)
    assert field in str(info.value) and "fix:" in str(info.value)


def test_config_is_frozen() -> None:
    config = AgentConfig()
    with pytest.raises(Exception, match="frozen"):
        config.max_iterations = 3  # type: ignore[misc]


def test_mcp_servers_accept_dicts_and_models() -> None:
    config = AgentConfig(
        mcp_servers=[
            {"name": "time", "command": "mcp-server-time", "args": [], "env": {}},
            MCPServer(name="web", url="http://127.0.0.1:8000/mcp"),
        ]
    )
    assert [s.name for s in config.mcp_servers] == ["time", "web"]
    assert config.mcp_servers[0].command == "mcp-server-time"


def test_mcp_server_needs_exactly_one_transport() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        MCPServer(name="both", command="x", url="http://127.0.0.1:1/mcp")
    with pytest.raises(ValueError, match="identifier"):
        MCPServer(name="a__b", command="x")


def test_output_schema_accepts_models() -> None:
    class Answer(BaseModel):
        value: int

    assert AgentConfig(output_schema=Answer).output_schema is Answer


def test_the_config_model_spec_builds_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai import ChatOpenAI

    from noema_graph import build_agent_graph
    from noema_graph.nodes.deps import AgentDeps
    from noema_graph.nodes.middleware import Node

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    graph = build_agent_graph(AgentConfig(model="openai:gpt-4o-mini", enabled_toolkits=()))
    node = graph.builder.nodes["plan"].runnable
    assert isinstance(node, Node)
    deps: AgentDeps = node.deps
    assert isinstance(deps.model, ChatOpenAI) and deps.model.model_name == "gpt-4o-mini"
    assert deps.planning_model is deps.model  # no planning_model: the main model plans


def test_a_bad_config_model_spec_names_the_field() -> None:
    from noema_graph import build_agent_graph

    with pytest.raises(ConfigurationError, match=r"AgentConfig\.model"):
        build_agent_graph(AgentConfig(model="nonsense-provider:x", enabled_toolkits=()))


class _Advice(BaseModel):
    score: float
    advice: str


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"answer_openings": {"advice": "Seen {tally}"}}, "advice: 'Seen {tally}' has a brace"),
        ({"answer_openings": {"tip": "Seen {tally:score}"}}, "fields ['tip']"),
        ({"answer_openings": {"score": "Seen {tally:score}"}}, "'score' is not a text field"),
        ({"answer_sources": {"score": "not a source"}}, "score: 'not a source' is not a source"),
    ],
)
def test_a_bad_answer_source_or_opening_names_its_field(
    fields: dict[str, dict[str, str]], named: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        AgentConfig(output_schema=_Advice, **fields)  # pyright: ignore[reportArgumentType]
    assert named in str(info.value)
    good = {"advice": "Seen {t:score:.0%}"}
    assert AgentConfig(output_schema=_Advice, answer_openings=good).answer_openings == good
