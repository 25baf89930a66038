"""Fixtures for the agent tests: the demo store (written once per module, copied per test)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.agents import build_agent
from noema_graph.agents.learners import Learner
from noema_graph.context import RunContext
from noema_graph.noema import DemoSummary, write_demo_data

PRICES = {"price_overrides": {"scripted": (1.0, 2.0)}}


def tutor_consults_calibration() -> list[Any]:
    """Scripted replies: socratic_tutor consults calibration (one child run), then asks."""
    from tests.scripted import call, plan_reply, structured, text, tools_reply

    return [
        plan_reply("Check confidence"),
        tools_reply(call("consult_calibration", {"question": "Calibrate user_id 1."})),
        plan_reply("Measure"),
        tools_reply(call("compute_calibration", {"user_id": 1})),
        text("measured"),
        structured("CalibrationAdvice", brier=0.2, ece=0.1, bias=0.02, advice="Fine."),
        text("well calibrated"),
        structured(
            "SocraticTurn",
            question="What do you expect?",
            concept="Noble gases",
            hint="Think of shells.",
            understanding="partial",
        ),
    ]


ADA = Learner(1, "ada")


@pytest.fixture(scope="module")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    """The demo store, written once per module; tests use a copy."""
    return write_demo_data(tmp_path_factory.mktemp("demo") / "demo.db")


@pytest.fixture
def demo(demo_master: DemoSummary, tmp_path: Path) -> DemoSummary:
    """A private copy of the demo store (tests may write to it)."""
    target = tmp_path / "learn.db"
    shutil.copyfile(demo_master.path, target)
    return demo_master.model_copy(update={"path": str(target)})


@pytest.fixture
def run_agent_graph() -> Callable[..., dict[str, Any]]:
    """Return ``run(name, model, db, request, learner=ADA, **invoke)`` -> final state.

    ``read=False`` builds the agent without its request reader, for tests of the mechanisms
    behind it (the reference check, recovery, the loop guard).
    """

    def run(
        name: str,
        model: Any,
        db: str,
        request: str,
        *,
        learner: Learner = ADA,
        thread: str = "t1",
        context: RunContext | None = None,
        checkpointer: Any = None,
        read: bool = True,
    ) -> dict[str, Any]:
        graph = build_agent(
            name,
            model=model,
            db=db,
            checkpointer=checkpointer or InMemorySaver(),
            overrides=PRICES if read else {**PRICES, "request_reader": None},
        )
        return graph.invoke(
            {"messages": [("user", request)]},
            {"configurable": {"thread_id": thread}},
            context=context or RunContext(user_id=learner.name),
        )

    return run
