"""Agents consulting agents: trace id, depth limit, usage and cost roll-up."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from noema_graph.context import RunContext
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.state.output import AgentOutput
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]

DIAGNOSIS = {
    "retention": 0.8,
    "lapses": 3,
    "patterns": ["weekend cramming"],
    "weak_areas": ["verbs"],
    "summary": "ok",
}
STRATEGY = {
    "focus": "verbs",
    "new_cards_per_day": 5,
    "adjustments": ["daily reviews"],
    "rationale": "diagnosis",
}


def _consult_tool_step(state: dict[str, Any], tool: str) -> dict[str, Any]:
    return next(
        s
        for s in state["output"]["reasoning"]["steps"]
        if s["kind"] == "tool" and s["action"]["tool"] == tool
    )


def test_strategy_consults_diagnostic_and_rolls_up(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        plan_reply("Ask for a diagnosis"),
        tools_reply(call("consult_diagnostic", {"question": "Diagnose user_id 1."})),
        # the child run: plan, one tool round, its answer, its structured result
        plan_reply("Read stats"),
        tools_reply(call("learning_stats", {"user_id": 1})),
        text("stats read"),
        structured("Diagnosis", **DIAGNOSIS),
        # back in the parent
        text("diagnosis received"),
        structured("StrategyAdjustment", **STRATEGY),
    )
    context = RunContext(user_id="ada", trace_id="trace-parent")
    state = run_agent_graph("strategy", model, demo.path, "Adjust my plan.", context=context)
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.validated and out.result == STRATEGY
    assert out.metadata.tools_used == ["consult_diagnostic"]
    # 4 parent calls + 4 child calls, 15 tokens and $0.00002 each
    assert out.metadata.token_usage.total_tokens == 8 * 15
    assert out.metadata.estimated_cost_usd == pytest.approx(8 * 20 / 1e6)
    step = _consult_tool_step(state, "consult_diagnostic")
    child = AgentOutput.model_validate(step["action"]["output"]["agent_output"])
    with LearningStore.open(demo.path) as store:
        stats = store.call("learning_stats", user_id=1)
    # answer_sources: retention and lapses are learning_stats', the rest the model's
    figures = {"retention": stats.retention, "lapses": stats.lapses}
    assert child.metadata.agent_name == "diagnostic" and child.result == {**DIAGNOSIS, **figures}
    assert child.metadata.trace_id == out.metadata.trace_id == "trace-parent"
    assert [s.kind for s in child.reasoning.steps] == ["plan", "tool", "thought", "final"]
    assert '"agent": "diagnostic"' in step["observation"]


def test_consulting_past_the_depth_limit_is_refused(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    model = scripted(
        plan_reply("Ask"),
        tools_reply(call("consult_diagnostic", {"question": "Diagnose user_id 1."})),
        text("no diagnosis available"),
        structured("StrategyAdjustment", **STRATEGY),
    )
    context = RunContext(user_id="ada", depth=2)  # already a grandchild
    state = run_agent_graph("strategy", model, demo.path, "Adjust.", context=context)
    step = _consult_tool_step(state, "consult_diagnostic")
    assert step["observation"].startswith("Refused: consulting 'diagnostic'")
    assert "limit 2" in step["observation"]
    # the answer validates, but its only tool call was refused: nothing backs it
    assert state["output"]["validated"] and not state["output"]["success"]
    assert state["output"]["error"]["code"] == "tools_failed"
    assert state["output"]["outcome"] == "partial"
    assert state["output"]["metadata"]["token_usage"]["total_tokens"] == 4 * 15


async def test_socratic_tutor_consults_calibration_async(scripted: Any, demo: DemoSummary) -> None:
    from noema_graph.agents import build_agent
    from tests.agents.conftest import PRICES, tutor_consults_calibration

    model = scripted(*tutor_consults_calibration())
    graph = build_agent("socratic_tutor", model=model, db=demo.path, overrides=PRICES)
    state = await graph.ainvoke(
        {"messages": [("user", "Quiz me.")]},
        context=RunContext(user_id="cleo", trace_id="t-async"),
    )
    out = AgentOutput.model_validate(state["output"])
    assert out.validated and out.metadata.token_usage.total_tokens == 8 * 15
    child = _consult_tool_step(state, "consult_calibration")["action"]["output"]["agent_output"]
    assert child["metadata"]["agent_name"] == "calibration"
    assert child["metadata"]["trace_id"] == "t-async"
    # the child ran for the parent's learner whatever user_id the model wrote (1)
    (measured,) = [s for s in child["reasoning"]["steps"] if s["kind"] == "tool"]
    assert measured["action"]["input"] == {"user_id": 3}


def test_child_context_outside_a_run_starts_at_depth_one() -> None:
    from noema_graph.agents.subagent import child_context

    context = child_context("strategy", "diagnostic")
    assert context.depth == 1 and context.metadata["parent_agent"] == "strategy"
