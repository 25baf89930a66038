"""Fixtures for the evaluation tests: the demo store (written once) and scripted agent runs."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from noema_graph.agents import build_agent
from noema_graph.agents.learners import Learner
from noema_graph.context import RunContext
from noema_graph.noema import DemoSummary, write_demo_data

ADA = Learner(1, "ada")
PRICES = {"price_overrides": {"scripted": (1.0, 2.0), "replay": (0.0, 0.0)}}


@pytest.fixture(scope="module")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """The demo store, written once per module; tests use copies."""
    return write_demo_data(tmp_path_factory.mktemp("demo") / "demo.sqlite")


@pytest.fixture
def fresh_store(demo_master: DemoSummary, tmp_path: Path) -> Callable[[str], Path]:
    """Return ``copy(name)``: a private copy of the demo store."""

    def copy(name: str) -> Path:
        target = tmp_path / f"{name}.sqlite"
        shutil.copyfile(demo_master.path, target)
        return target

    return copy


def run_turn(
    agent: str,
    model: Any,
    db: Path,
    request: str,
    *,
    checkpointer: Any,
    thread: str = "t1",
    learner: Learner = ADA,
    read: bool = True,
) -> dict[str, Any]:
    """Run one user turn of ``agent`` and return the final state.

    ``read=False`` builds the agent without its request reader, for tests of the recording
    underneath (a scripted model's calls then run whatever the request says).
    """
    overrides = PRICES if read else {**PRICES, "request_reader": None}
    graph = build_agent(agent, model=model, db=db, checkpointer=checkpointer, overrides=overrides)
    return graph.invoke(
        {"messages": [("user", request)]},
        {"configurable": {"thread_id": thread}},
        context=RunContext(user_id=learner.name),
    )
