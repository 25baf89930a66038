"""A free-text sentence holding a name or number no tool gave never reaches the learner.

End to end with the scripted model over the demo store: the answer check drops the
sentence before the answer is returned, and the evaluation's words check, which uses the
same definition, finds nothing left in the run's answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from noema_graph.evals.words import ungrounded_words
from noema_graph.noema import DemoSummary, LearningStore
from noema_graph.state.output import AgentOutput
from noema_graph.trajectory.steps import trajectory_of
from tests.scripted import call, plan_reply, structured, text, tools_reply

Run = Callable[..., dict[str, Any]]
REQUEST = "Help me recall card 5 without the answer."


def _turn(scripted: Any, demo: DemoSummary, run_agent_graph: Run, hint: str) -> dict[str, Any]:
    with LearningStore.open(demo.path) as store:
        front = store.call("get_card", card_id=5).front
    model = scripted(
        plan_reply("Read the card"),
        tools_reply(call("get_card", {"card_id": 5})),
        text("read the card"),
        structured("SocraticTurn", question=front, concept="", hint=hint, understanding="none"),
    )
    return run_agent_graph("socratic_tutor", model, demo.path, REQUEST)


def test_a_sentence_with_an_unseen_name_is_dropped_and_a_grounded_one_kept(
    scripted: Any, demo: DemoSummary, run_agent_graph: Run
) -> None:
    state = _turn(scripted, demo, run_agent_graph, "Picture a map of card 5. It is near Jupiter.")
    out = AgentOutput.model_validate(state["output"])
    assert out.success and out.validated
    assert out.result["hint"] == "Picture a map of card 5."
    notes = [s["thought"] for s in state["output"]["reasoning"]["steps"]]
    assert "Answer check: hint: dropped the sentences holding ['Jupiter'], which no tool gave" in (
        notes
    )
    graded = trajectory_of(REQUEST, out.result, state["trace"])
    assert ungrounded_words(graded) == []
    # the same answer unchecked is what the grader flags
    unchecked = graded.model_copy(
        update={"final_output": {**out.result, "hint": "It is near Jupiter."}}
    )
    assert [(w.kind, w.text) for w in ungrounded_words(unchecked)] == [("name", "Jupiter")]
