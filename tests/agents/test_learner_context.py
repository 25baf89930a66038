"""The learner comes from LangGraph's context or config into the request the model reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from noema_graph.agents import build_agent
from noema_graph.agents.learners import Learner, learner_request, read_learners
from noema_graph.context import RunContext
from noema_graph.noema import DemoSummary, LearningStore
from tests.agents.conftest import PRICES
from tests.scripted import ScriptedChatModel, call, plan_reply, structured, text, tools_reply

BEN = Learner(2, "ben")
SUFFIX = "[learner: ben, user_id 2]"


def _learning_script(db: str, user_id: int) -> list[Any]:
    with LearningStore.open(db) as store:
        due = store.call("list_due_cards", user_id=user_id, limit=10)
    pick = min((c for c in due.cards if c.due is not None), key=lambda c: c.retrievability)
    return [
        plan_reply("Pick the next card"),
        tools_reply(call("list_due_cards", {"user_id": user_id, "limit": 10})),
        text(f"card {pick.card.id}"),
        structured(
            "NextCard", card_id=pick.card.id, reason="lowest", expected_recall=pick.retrievability
        ),
    ]


def _run(
    model: ScriptedChatModel,
    db: str,
    request: str,
    *,
    context: RunContext | None = None,
    configurable: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], Any]:
    graph = build_agent(
        "learning", model=model, db=db, checkpointer=InMemorySaver(), overrides=PRICES
    )
    config: Any = {"configurable": {"thread_id": "t1", **(configurable or {})}}
    state = graph.invoke({"messages": [("user", request)]}, config, context=context)
    return state, graph.get_state(config)


def _human(prompt: list[Any]) -> str:
    return next(m.text for m in prompt if m.type == "human")


def test_context_user_id_names_the_learner_for_every_model_call(
    scripted: Any, demo: DemoSummary
) -> None:
    model = scripted(*_learning_script(demo.path, BEN.id))
    state, snapshot = _run(model, demo.path, "What next?", context=RunContext(user_id="ben"))
    assert state["output"]["success"] is True, state["output"]
    # plan and every later step saw the learner: the request in the thread carries it
    assert all(SUFFIX in _human(prompt) for prompt in model.prompts[:3])
    (request,) = [m for m in snapshot.values["messages"] if m.type == "human"]
    assert request.content == f"What next?\n\n{SUFFIX}"
    assert request.id is not None


def test_configurable_user_id_by_id_names_the_learner(scripted: Any, demo: DemoSummary) -> None:
    model = scripted(*_learning_script(demo.path, BEN.id))
    state, _ = _run(model, demo.path, "What next?", configurable={"user_id": 2})
    assert state["output"]["success"] is True, state["output"]
    assert _human(model.prompts[0]).endswith(SUFFIX)


def test_a_request_that_names_its_learner_is_left_alone(scripted: Any, demo: DemoSummary) -> None:
    model = scripted(*_learning_script(demo.path, BEN.id))
    request = learner_request("What next?", BEN)
    _, snapshot = _run(model, demo.path, request, context=RunContext(user_id="ben"))
    assert _human(model.prompts[0]) == request  # not suffixed twice
    assert snapshot.values["messages"][0].content == request


def test_without_a_learner_the_request_is_unchanged(scripted: Any, demo: DemoSummary) -> None:
    model = scripted(*_learning_script(demo.path, 1))
    _, snapshot = _run(model, demo.path, "What next for user_id 1?")
    assert _human(model.prompts[0]) == "What next for user_id 1?"
    assert snapshot.values["messages"][0].content == "What next for user_id 1?"


def test_an_unknown_learner_ends_the_run_naming_the_known_ones(
    scripted: Any, demo: DemoSummary
) -> None:
    model = scripted()  # the model is never called
    state, _ = _run(model, demo.path, "What next?", context=RunContext(user_id="zed"))
    output = state["output"]
    assert output["success"] is False
    assert output["error"]["code"] == "hook_error"
    details = output["error"]["details"]
    assert (details["node"], details["stage"]) == ("plan", "pre_process")
    assert "no learner 'zed'" in details["message"]
    assert "use one of ['ada', 'ben', 'cleo']" in details["message"]


def test_read_learners_of_a_missing_or_foreign_file(tmp_path: Path, demo: DemoSummary) -> None:
    assert [x.name for x in read_learners(demo.path)] == ["ada", "ben", "cleo"]
    missing = tmp_path / "missing.sqlite"
    assert read_learners(missing) == []
    assert not missing.exists()  # read-only: nothing created
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database")
    assert read_learners(foreign) == []
