"""Each prompt's stable prefix: the start of its system message, nothing of the request."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from noema_graph.agents.catalog import DEFINITIONS
from noema_graph.agents.prompts import CALIBRATION
from noema_graph.nodes.common import tools_text
from noema_graph.nodes.execute_step import build_prompt, step_prefix
from noema_graph.nodes.finalize import _prompt, answer_prefix  # pyright: ignore[reportPrivateUsage]
from noema_graph.prompts import EXAMPLES_HEADING, stable_prefix
from noema_graph.state.models import ReasoningStep, TaskPlan, TaskStep, ToolAction
from tests.helpers import add
from tests.nodes.helpers import deps

INSTRUCTIONS = CALIBRATION.render()
REQUEST = "Is my confidence right? I am zed, user 98765."


def _state(**extra: Any) -> dict[str, Any]:
    plan = TaskPlan(goal="g", steps=(TaskStep(description="Call add."),)).started()
    return {"messages": [HumanMessage(REQUEST)], "plan": plan, "trace": [], **extra}


def _observed(data: dict[str, Any]) -> ReasoningStep:
    output = {"status": "success", "data": data}
    action = ToolAction(tool="compute_calibration", input={"user_id": 98765}, output=output)
    observation = '{"status":"success","data":' + str(data).replace("'", '"') + "}"
    return ReasoningStep(kind="tool", action=action, observation=observation)


def test_the_agent_prefix_is_its_instructions_before_the_examples() -> None:
    prefix = stable_prefix(INSTRUCTIONS)
    assert INSTRUCTIONS.startswith(prefix) and EXAMPLES_HEADING not in prefix
    assert stable_prefix("No examples here.\n") == "No examples here."


def test_the_answer_prefix_holds_the_chosen_example_but_not_the_request() -> None:
    # the answer prompt shows a worked example only to an agent with openings (calibration's)
    calibration = next(d for d in DEFINITIONS if d.name == "calibration")
    made = deps(
        name="calibration",
        instructions=INSTRUCTIONS,
        output_schema=calibration.output_schema,
        answer_openings=calibration.answer_openings,
    )
    for direction in ("over-confident", "under-confident"):
        trace = [_observed({"brier": 0.2, "direction": direction})]
        prompt = _prompt(_state(trace=trace), made, {"brier": 0.2}, None)  # type: ignore[arg-type]
        prefix = answer_prefix(prompt, "calibration")
        assert prefix is not None and prompt[0].text.startswith(prefix)
        assert EXAMPLES_HEADING in prefix and prefix.endswith("do not mention the plan.")
        assert "zed" not in prefix and "98765" not in prefix and REQUEST not in prefix
    bare = _prompt(_state(), made)  # type: ignore[arg-type]
    assert answer_prefix(bare, "calibration") is not None
    assert answer_prefix(bare, "another agent") is None


def test_the_react_prefix_holds_the_tools_and_rules_but_not_the_request() -> None:
    made = deps(name="calibration", instructions=INSTRUCTIONS, protocol="react", tools=[add])
    prompt = build_prompt(_state(), made, [add], [])  # type: ignore[arg-type]
    prefix = step_prefix(prompt, made, [add])
    assert prefix is not None and prompt[0].text.startswith(prefix)
    assert prefix.startswith(INSTRUCTIONS.strip()) and tools_text([add]) in prefix
    assert "Reply in one of two forms" in prefix and prefix.endswith("on its own result.")
    assert "zed" not in prefix and "Goal" not in prefix
    assert step_prefix(prompt, made, []) is None  # another step's tools: not this prompt's
