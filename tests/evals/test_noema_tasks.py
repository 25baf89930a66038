"""The shipped Noema task set: its gold values come from the demo store, its calls exist."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from noema_graph.agents import DEFINITIONS
from noema_graph.agents.learners import read_learners
from noema_graph.evals import NOEMA_TASKS, load_dataset
from noema_graph.evals.noema_tasks import build_from_demo
from noema_graph.evals.runner import tool_schemas
from noema_graph.noema import write_demo_data
from noema_graph.noema.operations import DOMAIN_OPERATIONS


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


def test_every_expected_call_is_one_the_agent_can_make(tmp_path: Path) -> None:
    learners = {x.name: x.id for x in read_learners(write_demo_data(tmp_path / "d.db").path)}
    for item in load_dataset(NOEMA_TASKS).dataset:
        agent = item.tag("agent")
        assert agent is not None
        schemas = tool_schemas(agent)
        for expected in item.expected_trajectory or []:
            assert expected.tool in schemas, (item.id, expected.tool)
            properties = schemas[expected.tool].get("properties", {})
            operation = DOMAIN_OPERATIONS.get(expected.tool)
            owner = operation.owner_fields if operation is not None else frozenset[str]()
            # the model writes the offered arguments; the recorded call also holds the owner
            # fields the framework injected, which can only be the run's own learner
            assert set(expected.input) <= set(properties) | owner, (item.id, expected.input)
            for key, value in expected.input.items():
                if key in owner:
                    assert value == learners[str(item.tag("user"))], (item.id, key, value)
                else:
                    jsonschema.validate(value, properties[key])
