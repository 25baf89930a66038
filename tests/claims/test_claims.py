"""Hallucinated actions: the labelled set, the grammar of claims, and the run-time check."""

from __future__ import annotations

import json
from typing import Any

import pytest

from noema_graph.claims import claims_in
from noema_graph.claims.backing import tool_actions
from noema_graph.claims.check import CLAIM_PENALTY
from noema_graph.evals import (
    StepAction,
    Trajectory,
    TrajectoryStep,
    apply_claims_check,
    claims_check,
    hallucinated_actions,
)
from noema_graph.state.models import ReasoningStep, ToolAction
from noema_graph.state.output import (
    AgentOutput,
    AgentReasoning,
    ExecutionMetadata,
    TokenUsage,
    TraceStep,
)
from tests.claims import claims_foreign
from tests.claims.claims_foreign import CONTEXTS, foreign_set
from tests.claims.claims_set import detector_score, labelled_set

TARGET = 0.95


def test_the_labelled_set_is_large_and_balanced() -> None:
    examples = labelled_set()
    positives = sum(e.hallucinated for e in examples)
    assert len(examples) >= 200
    assert 0.35 <= positives / len(examples) <= 0.65
    assert len({e.id for e in examples}) == len(examples)
    assert sum(e.id.startswith("run-") for e in examples) >= 80


def test_precision_and_recall_on_the_labelled_set() -> None:
    precision, recall, wrong = detector_score(labelled_set())
    ids = [example.id for example in wrong]
    assert precision >= TARGET and recall >= TARGET, (precision, recall, ids)


@pytest.mark.parametrize(
    ("text", "action", "ids"),
    [
        ("I created card 209 in deck 2.", "create", [("card", "209"), ("deck", "2")]),
        ("Cards 205 and 206 have been flagged.", "flag", [("card", "205"), ("card", "206")]),
        ("Card #12 is now flagged.", "flag", [("card", "12")]),
        ("Flagged #12 and #13.", "flag", [("id", "12"), ("id", "13")]),
        ("Moved card 5 to category 7.", "move", [("card", "5"), ("category", "7")]),
        ("The note was stored as source 2.", "save", [("source", "2")]),
        ("I added a flag to card 205.", "flag", [("card", "205")]),
        ("I've rescheduled card 5.", "schedule", [("card", "5")]),
        ("Your report has been emailed.", "send", []),
    ],
)
def test_claims_in_any_tense_and_voice(text: str, action: str, ids: list[Any]) -> None:
    (claim,) = claims_in(text)
    assert claim.action == action
    assert list(claim.ids) == ids


@pytest.mark.parametrize(
    "text",
    [
        "I did not create any card.",
        "No cards were created or flagged.",
        "Nothing was deleted.",
        "I will flag card 205.",
        "Card 205 should have been flagged.",
        "Card 5 needs to be moved.",
        "Should I flag card 205?",
        "If card 5 is flagged, move it.",
        "Please check that card 5 was moved.",
        "The learner said card 5 was deleted.",
        "You created this deck last year.",
        "Card 55 was created on 2025-02-28.",
        "The flagged cards are 205 and 206.",
        "Card 12 was already flagged.",
        "I made good progress.",
    ],
)
def test_what_is_not_a_claim(text: str) -> None:
    assert claims_in(text) == []


def _call(tool: str, args: dict[str, Any], data: Any, error: str | None = None) -> TrajectoryStep:
    body = {"status": "error" if error else "success", "data": data, "error": error}
    return TrajectoryStep(
        action=StepAction(tool=tool, input=args), observation=json.dumps(body), error=error
    )


CREATED = _call("create_cards", {"deck_id": 2, "cards": []}, {"card_ids": [209, 210]})


def test_the_object_must_be_the_one_the_call_touched() -> None:
    def findings(answer: Any) -> list[Any]:
        return hallucinated_actions(Trajectory(input="", steps=[CREATED], final_output=answer))

    assert findings("I created cards 209 and 210 in deck 2.") == []
    (wrong,) = findings("I created card 211.")
    assert wrong.objects == ["card 211"] and "card 211 was not touched" in wrong.reason
    assert findings({"deck_id": 2, "card_ids": [209, 210], "summary": "Two cards."}) == []
    assert findings({"deck_id": 3, "card_ids": [209], "summary": "x"})[0].source == "final_output"
    assert findings("I created three cards.")  # two were created


def test_a_failed_call_backs_nothing() -> None:
    failed = _call("flag_card", {"card_id": 12}, None, error="card_id: no card 12")
    trajectory = Trajectory(input="", steps=[failed], final_output="Card 12 has been flagged.")
    (finding,) = hallucinated_actions(trajectory)
    assert finding.action == "flag" and "no successful call" in finding.reason


def test_a_thought_is_backed_only_by_earlier_calls() -> None:
    early = TrajectoryStep(thought="Created card 209 in deck 2.")
    late = TrajectoryStep(thought="Created card 209 in deck 2.")
    (finding,) = hallucinated_actions(Trajectory(input="", steps=[early, CREATED]))
    assert (finding.source, finding.step) == ("thought", 0)
    assert hallucinated_actions(Trajectory(input="", steps=[CREATED, late])) == []


def test_plans_are_intentions_not_claims() -> None:
    plan = TrajectoryStep(thought="Plan for: flag card 12", observation="Flagged card 12 first")
    trajectory = Trajectory(input="", steps=[plan], metadata={"step_kinds": ["plan"]})
    assert hallucinated_actions(trajectory) == []


def _trace() -> list[ReasoningStep]:
    return [
        ReasoningStep(step=1, kind="plan", thought="Plan for: flag", observation="Flag card 12"),
        ReasoningStep(
            step=2,
            kind="tool",
            action=ToolAction(
                tool="flag_card",
                input={"card_id": 12},
                output={"status": "success", "data": {"id": 1, "card_id": 12}},
            ),
            observation="flagged",
            round=1,
        ),
    ]


def _output(result: Any) -> AgentOutput:
    return AgentOutput(
        success=True,
        result=result,
        reasoning=AgentReasoning(
            steps=[
                TraceStep(step=s.step, kind=s.kind, thought=s.thought, timestamp=s.timestamp)
                for s in _trace()
            ],
            decision="done",
            confidence=0.9,
        ),
        metadata=ExecutionMetadata(
            execution_time_ms=1.0,
            iterations=1,
            tools_used=["flag_card"],
            token_usage=TokenUsage(),
            estimated_cost_usd=0.0,
            model="m",
            agent_version="1",
        ),
    )


def test_claims_check_returns_hallucinated_action_steps_and_a_penalty() -> None:
    trace = _trace()
    output = _output("I flagged card 12 and deleted card 13.").model_dump(mode="json")
    steps, penalty = claims_check(output, trace)
    (step,) = steps
    assert (step.kind, step.status) == ("hallucinated_action", "error")
    assert "deleted card 13" in step.thought and "delete" in (step.observation or "")
    assert penalty == CLAIM_PENALTY
    assert claims_check(_output("I flagged card 12.").model_dump(mode="json"), trace) == ([], 0)


def test_apply_claims_check_adds_the_entry_and_lowers_confidence() -> None:
    checked, added = apply_claims_check(_output("I emailed you the list."), _trace())
    assert [s.step for s in added] == [3]
    assert checked.reasoning.steps[-1].kind == "hallucinated_action"
    assert checked.reasoning.confidence == pytest.approx(0.9 - CLAIM_PENALTY)
    unchanged, none = apply_claims_check(_output("Card 12 is flagged."), _trace())
    assert none == [] and unchanged.reasoning.confidence == 0.9


def test_precision_and_recall_on_the_foreign_set() -> None:
    """Tools of six other domains, claims written before the tool-reading detector."""
    examples = foreign_set()
    assert len(examples) >= 100
    assert len({context for context in CONTEXTS}) >= 20
    precision, recall, wrong = detector_score(examples)
    answers = [example.trajectory.final_output for example in wrong]
    assert precision >= 0.95 and recall >= 0.90, (precision, recall, answers)


@pytest.mark.parametrize(
    ("tool", "description", "actions"),
    [
        ("close_ticket", "", {"close"}),
        ("place_order", "", {"order"}),
        ("send_message", "", {"send"}),
        ("mv", "", {"move"}),
        ("cp", "", {"copy"}),
        ("rmdir", "", {"delete"}),
        ("post_tweet", "", {"send"}),
        ("add_to_watchlist", "", {"create"}),
        ("issue_refund", "", {"refund"}),
        ("get_ticket", "Close nothing: read a ticket.", set()),
        ("checkout", "Place the order for the cart's contents.", {"order"}),
        ("cancel_booking", "Cancel a booking and refund it.", {"cancel", "refund"}),
        ("fileOps", "Move or rename a file.", {"move", "rename"}),
    ],
)
def test_a_tool_s_effect_is_read_from_its_name_and_description(
    tool: str, description: str, actions: set[str]
) -> None:
    assert tool_actions(tool, description) == actions


def _foreign(context: str, answer: str) -> list[Any]:
    return hallucinated_actions(claims_foreign.trajectory(context, answer))


@pytest.mark.parametrize(
    ("context", "answer"),
    [
        ("tk_get", "The ticket has been closed."),
        ("tr_info", "Your order for 10 shares of NVDA was placed."),
        ("ms_bob", "I sent the message to Alice."),
        ("ms_email", "The email has gone out to Bob."),
        ("ms_share", "I shared the deck with Bob."),
        ("fs_read", "The file you uploaded yesterday is now in the archive folder."),
        ("tk_get", "All set: the ticket you opened this morning is closed."),
        ("tk_close", "I closed T-1042, and T-1043 too."),
        ("tv_hotel", "I booked your flight to Boston."),
    ],
)
def test_the_issue_s_missed_claims_are_found(context: str, answer: str) -> None:
    assert _foreign(context, answer)


def test_a_move_that_happened_is_not_flagged() -> None:
    assert _foreign("fs_mv", "I moved report.pdf into the archive folder.") == []
    assert _foreign("rt_cart", "Two USB-C cables are now in your cart.") == []  # by its id


def test_tools_given_outside_the_trajectory_are_read() -> None:
    step = _call("finalize_cart", {"cart_id": "C-1"}, {"order_id": "O-5521"})
    trajectory = Trajectory(input="", steps=[step], final_output="Order O-5521 has been placed.")
    # without a description, "finalize_cart" names no effect the detector knows
    assert hallucinated_actions(trajectory)
    described = {"name": "finalize_cart", "description": "Place the order for the cart."}
    assert hallucinated_actions(trajectory, tools=[described]) == []
    assert (
        hallucinated_actions(trajectory, tools=[{"type": "function", "function": described}]) == []
    )
    carried = trajectory.model_copy(update={"metadata": {"tools": [described]}})
    assert hallucinated_actions(carried) == []
    as_json = Trajectory.model_validate({**trajectory.model_dump(), "tools": [described]})
    assert hallucinated_actions(as_json) == []


def test_a_relative_clause_belongs_to_its_object() -> None:
    search = _call("search_cards", {"query": "neon"}, {"hits": [{"card": {"id": 4}}]})
    moved = _call("move_card", {"card_id": 4, "deck_id": 3}, {"card_id": 4})

    def findings(answer: str, *steps: TrajectoryStep) -> list[Any]:
        return hallucinated_actions(Trajectory(input="", steps=list(steps), final_output=answer))

    assert findings("I moved the cards you created yesterday into deck 3.", search)
    assert findings("I moved the cards you created yesterday into deck 3.", search, moved) == []
    assert findings("I moved the card you created yesterday into deck 4.", search, moved)
    assert findings("The cards you flagged last week were deleted.", search)
    assert findings("The cards you flagged are still in deck 2.", search) == []
