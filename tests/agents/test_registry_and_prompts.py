"""Definitions, the prompt store and the registry: validation at startup, O(1) lookup."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from noema_graph.agents import (
    DEFINITIONS,
    AgentDefinition,
    AgentPrompt,
    AgentRegistry,
    FewShotExample,
    PromptStore,
    default_prompts,
    default_registry,
    schemas,
)
from noema_graph.errors import ConfigurationError
from noema_graph.prompts import PromptTemplate


class Echo(BaseModel):
    text: str


def _prompt(text: str = "Say ${word}.\n${examples}", version: str = "1.0.0") -> AgentPrompt:
    return AgentPrompt(
        PromptTemplate("echo", version, text),
        (FewShotExample("say hi", (), '{"text": "hi"}'),),
    )


def _definition(**overrides: Any) -> AgentDefinition:
    base: dict[str, Any] = {
        "name": "echo",
        "description": "Echo a word.",
        "prompt": "echo",
        "prompt_variables": {"word": "hello"},
        "output_schema": Echo,
    }
    return AgentDefinition(**{**base, **overrides})


def test_the_ten_agents_are_registered_with_rendered_prompts() -> None:
    registry = default_registry()
    assert registry.names() == (
        "learning",
        "diagnostic",
        "strategy",
        "content_generation",
        "socratic_tutor",
        "calibration",
        "ingestion",
        "knowledge_graph",
        "taxonomy_curator",
        "governance",
    )
    for definition in registry.get_all():
        text = registry.instructions(definition.name)
        assert "${" not in text and "Example 1:" in text
        assert issubclass(definition.output_schema, BaseModel)
    assert registry.get("learning").output_schema is schemas.NextCard
    assert set(schemas.CalibrationAdvice.model_fields) == {"brier", "ece", "bias", "advice"}
    assert set(schemas.NextCard.model_fields) == {"card_id", "reason", "expected_recall"}


def test_permissions_follow_the_tools() -> None:
    registry = default_registry()
    assert registry.get("diagnostic").permissions == ("fs:read",)
    assert registry.get("governance").permissions == ("fs:write",)  # both tools write
    assert registry.get("strategy").subagents == ("diagnostic",)
    assert registry.get("socratic_tutor").subagents == ("calibration",)


def test_registry_register_get_unregister_and_duplicates() -> None:
    registry = AgentRegistry(prompts=PromptStore([_prompt()]))
    definition = registry.register(_definition())
    assert registry.get("echo") is definition and "echo" in registry and len(registry) == 1
    assert registry.instructions("echo").startswith("Say hello.")
    with pytest.raises(ConfigurationError, match="already registered"):
        registry.register(_definition())
    assert registry.unregister("echo") is definition
    assert registry.get_all() == ()
    with pytest.raises(ConfigurationError, match="no agent named 'echo'"):
        registry.get("echo")


@pytest.mark.parametrize(
    ("prompt", "overrides", "message"),
    [
        (_prompt(), {"prompt_variables": {}}, "needs variables"),
        (_prompt(), {"prompt_variables": {"word": "x", "extra": "y"}}, "needs variables"),
        (_prompt(), {"prompt": "missing"}, "no prompt 'missing'"),
        (_prompt(), {"prompt_version": "2.0.0"}, "no prompt 'echo' at version 2.0.0"),
        (
            AgentPrompt(
                PromptTemplate("echo", "1.0.0", "Say ${word}.\n${examples}"),
                (FewShotExample("x", (), '{"txt": 1}'),),
            ),
            {},
            "example 1's answer does not match Echo",
        ),
    ],
)
def test_invalid_prompts_fail_at_registration(
    prompt: AgentPrompt, overrides: dict[str, Any], message: str
) -> None:
    registry = AgentRegistry(prompts=PromptStore([prompt]))
    with pytest.raises(ConfigurationError, match=message):
        registry.register(_definition(**overrides))


def test_prompt_store_versions_and_syntax() -> None:
    store = PromptStore([_prompt(), _prompt("Shout ${word}!\n${examples}", "1.10.0")])
    assert store.get("echo").template.version == "1.10.0"  # numeric, not string, order
    assert store.get("echo", "1.0.0").template.text.startswith("Say")
    with pytest.raises(ConfigurationError, match="already registered"):
        store.register(_prompt())
    with pytest.raises(ConfigurationError, match="not a \\$\\{variable\\}"):
        PromptStore([_prompt("Costs $ 5 ${word} ${examples}")])
    with pytest.raises(ConfigurationError, match="no \\$\\{examples\\}"):
        PromptStore([_prompt("Say ${word}.")])
    assert len(default_prompts()) == len(DEFINITIONS) == 10


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"name": "not a name"}, "name"),
        ({"version": "1.0"}, "version"),
        ({"tools": ("list_due_cards", "nope")}, "tools"),
        ({"tools": ("get_card", "get_card")}, "tools"),
    ],
)
def test_definition_validation_names_the_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigurationError, match=field):
        _definition(**overrides)


def test_catalog_tables_become_definitions() -> None:
    from noema_graph.agents.catalog import LIMITS, load_definitions

    (echo,) = load_definitions(
        '[calibration]\ndescription = "Echo."\ntools = ["get_card"]\n'
        'output_schema = "NextCard"\nlimits = "quick"\n'
    )
    assert (echo.name, echo.prompt, echo.tools) == ("calibration", "calibration", ("get_card",))
    assert echo.output_schema is schemas.NextCard and echo.limits == LIMITS["quick"]
    assert [d.name for d in DEFINITIONS][:2] == ["learning", "diagnostic"]


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ('output_schema = "Nope"\nlimits = "quick"', "catalog.x.output_schema"),
        ('output_schema = "NextCard"\nlimits = "slow"', "catalog.x.limits"),
        ('output_schema = "NextCard"\nlimits = "quick"\ntools = ["nope"]', "tools"),
    ],
)
def test_catalog_errors_name_the_entry_and_field(table: str, field: str) -> None:
    from noema_graph.agents.catalog import load_definitions

    with pytest.raises(ConfigurationError, match=field):
        load_definitions(f'[x]\ndescription = "X."\n{table}\n')


def test_definition_config_carries_limits_and_overrides() -> None:
    definition = default_registry().get("learning")
    config = definition.to_config("instr", max_iterations=9)
    assert config.name == "learning" and config.instructions == "instr"
    assert config.max_iterations == 9 and config.timeout_s == definition.limits.timeout_s
    assert config.enabled_toolkits == () and config.output_schema is schemas.NextCard
    assert config.permissions == ("fs:read",)


def test_get_graph_builds_every_agent_and_rejects_unknown_names(tmp_path: Any) -> None:
    from noema_graph import get_graph
    from tests.scripted import ScriptedChatModel

    model = ScriptedChatModel(script=[])
    for name in default_registry().names():
        graph = get_graph(name, model=model, db=tmp_path / "x.db")
        assert graph.get_name() == name
        assert {"plan", "execute_step", "tool_node", "finalize"} <= set(graph.get_graph().nodes)
    with pytest.raises(ConfigurationError, match="no agent named 'nope'"):
        get_graph("nope", model=model)


def test_langgraph_json_exposes_every_agent_and_ask() -> None:
    import importlib
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = json.loads((root / "langgraph.json").read_text())
    assert set(spec["graphs"]) == {*default_registry().names(), "ask"}
    for target in spec["graphs"].values():
        path, _, attr = target.partition(":")
        module = importlib.import_module(
            path.removeprefix("./").removesuffix(".py").replace("/", ".")
        )
        assert callable(getattr(module, attr))


def test_every_prompt_renders_as_string_template_would() -> None:
    from string import Template

    from noema_graph import prompts
    from noema_graph.agents.prompts import AGENT_PROMPTS

    templates = [t for t in vars(prompts).values() if isinstance(t, PromptTemplate)]
    templates += [p.template for p in AGENT_PROMPTS]
    templates.append(PromptTemplate("odd", "1", "a {brace} $$5 ${x}{y}} $x.\n{{${x}}}"))
    assert len(templates) >= 18
    for template in templates:
        values = {name: f"<{name} {{0}} $x>" for name in template.variables}
        assert template.render(**values) == Template(template.text).substitute(values)


def test_a_template_with_an_invalid_placeholder_names_the_prompt_and_the_fix() -> None:
    broken = PromptTemplate("price", "2", "Costs $ 5 for ${item}.")
    with pytest.raises(ConfigurationError, match=r"'price' v2.*invalid placeholder.*\$\$"):
        broken.render(item="tea")


def test_secret_fields_are_declared_once_and_name_own_tools() -> None:
    from noema_graph.agents.catalog import DEFINITIONS
    from noema_graph.agents.definition import AgentDefinition
    from noema_graph.errors import ConfigurationError

    tutor = next(d for d in DEFINITIONS if d.name == "socratic_tutor")
    assert tutor.secret_fields == {"get_card": ("back",)}
    data = tutor.model_dump(exclude={"secret_fields"})
    with pytest.raises(ConfigurationError, match="secret_fields"):
        AgentDefinition(**data, secret_fields={"flag_card": ("reason",)})
