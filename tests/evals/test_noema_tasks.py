"""The shipped Noema task set: its gold values come from the demo store, its calls exist."""

from __future__ import annotations

import json
from collections import Counter

import jsonschema
import pytest

from noema_graph.agents import DEFINITIONS
from noema_graph.evals import NOEMA_TASKS, load_dataset
from noema_graph.evals.noema_tasks import build_from_demo
from noema_graph.evals.runner import tool_schemas


@pytest.fixture(scope="module")
def shipped() -> dict[str, object]:
    return json.loads(NOEMA_TASKS.read_text())


def test_the_shipped_file_is_what_the_demo_store_gives(shipped: dict[str, object]) -> None:
    assert build_from_demo() == shipped


def test_at_least_forty_tasks_over_all_ten_agents() -> None:
    dataset = load_dataset(NOEMA_TASKS)
    agents = Counter(item.tag("agent") for item in dataset.dataset)
    assert len(dataset.dataset) >= 40
    assert set(agents) == {d.name for d in DEFINITIONS}
    assert min(agents.values()) >= 4
    assert all(item.expected_output is not None for item in dataset.dataset)
    assert all(item.tag("user") in ("ada", "ben", "cleo") for item in dataset.dataset)


def test_every_expected_call_is_one_the_agent_can_make() -> None:
    for item in load_dataset(NOEMA_TASKS).dataset:
        agent = item.tag("agent")
        assert agent is not None
        schemas = tool_schemas(agent)
        for expected in item.expected_trajectory or []:
            assert expected.tool in schemas, (item.id, expected.tool)
            properties = schemas[expected.tool].get("properties", {})
            assert set(expected.input) <= set(properties), (item.id, expected.input)
            for key, value in expected.input.items():
                jsonschema.validate(value, properties[key])
