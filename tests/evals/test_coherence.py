"""Coherence of reasoning: thoughts that announce the next call, answers the calls back."""

from __future__ import annotations

import json

from noema_graph.evals import EvalItem, StepAction, Trajectory, TrajectoryEvaluator, TrajectoryStep
from noema_graph.evals.coherence import coherence, coherence_judge
from tests.scripted import ScriptedChatModel, structured


def _call(tool: str, args: dict[str, object], thought: str = "") -> TrajectoryStep:
    body = json.dumps({"status": "success", "data": args})
    return TrajectoryStep(
        thought=thought, action=StepAction(tool=tool, input=args), observation=body
    )


def test_thoughts_that_announce_the_next_call_are_coherent() -> None:
    steps = [
        TrajectoryStep(thought="First I search the cards about neon."),
        _call("search_cards", {"query": "neon"}),
        _call("flag_card", {"card_id": 12}, thought="Card 12 is wrong: flag it."),
    ]
    trajectory = Trajectory(input="q", steps=steps, final_output="I flagged card 12.")
    assert coherence(trajectory) == 1.0


def test_a_thought_naming_another_tool_and_a_false_answer_lower_the_score() -> None:
    steps = [
        TrajectoryStep(thought="Now I flag the card."),
        _call("search_cards", {"query": "neon"}),
        _call("flag_card", {"card_id": 12}, thought="Card 12 needs a flag."),
    ]
    trajectory = Trajectory(input="q", steps=steps, final_output="I deleted card 12.")
    assert coherence(trajectory) == round(1 / 3, 4)


def test_nothing_to_check_is_none() -> None:
    assert coherence(Trajectory(input="q", steps=[_call("search_cards", {})])) is None


def test_the_judge_variant_asks_the_configured_model() -> None:
    judge = ScriptedChatModel(script=[structured("score", reasoning="Consistent.", score=0.75)])
    score = coherence_judge(judge)
    steps = [_call("flag_card", {"card_id": 12}, thought="Flag card 12.")]
    assert score(Trajectory(input="flag card 12", steps=steps, final_output="done")) == 0.75
    prompt = " ".join(str(m.content) for m in judge.prompts[0])
    assert "flag card 12" in prompt and "flag_card" in prompt
    judge.assert_complete()


def test_the_evaluator_takes_another_coherence_scorer() -> None:
    item = EvalItem(id="x", input="q")
    result = TrajectoryEvaluator(coherence_scorer=lambda _t: 0.5).score(item, Trajectory(input="q"))
    assert result.coherence == 0.5
