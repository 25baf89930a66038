"""An agent's answer prompt shows the tool-result fields its catalog entry declares, end to end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.state.output import AgentOutput
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]


def test_diagnostics_answer_prompt_leaves_the_review_rows_out(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    with LearningStore.open(demo.path) as store:
        stats = store.call("learning_stats", user_id=1)
        history = store.call("get_review_history", user_id=1, limit=5)
    model = scripted(
        plan_reply("Diagnose"),
        tools_reply(
            call("learning_stats", {"user_id": 1}),
            call("get_review_history", {"user_id": 1, "limit": 5}),
        ),
        text("read"),
        structured("Diagnosis", patterns=[], weak_areas=[], summary="Steady work."),
    )
    state = run_agent_graph("diagnostic", model, demo.path, "How am I doing?")
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.result["lapses"] == stats.lapses  # sourced from the full result
    answer_prompt = " ".join(str(m.content) for m in model.prompts[-1])
    assert f'"total_reviews":{stats.total_reviews}' in answer_prompt
    assert "Action: get_review_history" not in answer_prompt  # left out of the observations
    assert "reviewed_at" not in answer_prompt and "due_now" not in answer_prompt
    assert history.reviews  # the rows were there to leave out
