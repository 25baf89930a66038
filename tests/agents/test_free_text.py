"""Free text in agent results and prompts: bounded, without loops, nothing to copy."""

from __future__ import annotations

import re

import pytest
from langchain_core.tools import tool

from noema_graph.agents import schemas
from noema_graph.agents.registry import default_registry
from noema_graph.models.repetition import has_repetition
from noema_graph.nodes.execute_step import OBSERVATION_NUDGE
from noema_graph.prompts import REACT, is_arithmetic, key_words, react_hints

# What the embedded model wrote into the calibration advice before the fix.
LOOPING_ADVICE = (
    "You are over-confident: rate lower unless you are sure. You are over-confident: rate "
    "higher, you are overconfident: rate lower, you are overconfident: rate higher."
)
REAL_LEARNERS = re.compile(r"\b(ada|ben|cleo)\b|user_id [123]\b|\"user_id\": [123]\b", re.I)


def test_a_looping_advice_is_cut_to_its_first_sentence() -> None:
    advice = schemas.CalibrationAdvice.model_validate(
        {"brier": 0.16, "ece": 0.12, "bias": 0.12, "advice": LOOPING_ADVICE}
    )
    assert advice.advice == "You are over-confident: rate lower unless you are sure."


def test_list_fields_drop_repeated_items_and_loops() -> None:
    diagnosis = schemas.Diagnosis.model_validate(
        {
            "retention": 0.8,
            "lapses": 3,
            "patterns": ["1. Reviews cluster on weekends", "2. Reviews cluster on weekends"],
            "weak_areas": ["Ben ben ben ben ben ben", "Spanish verbs"],
            "summary": "You do well. You do well. You do well. You do well.",
        }
    )
    assert diagnosis.patterns == ["1. Reviews cluster on weekends"]
    assert diagnosis.weak_areas == ["Ben", "Spanish verbs"]
    assert diagnosis.summary == "You do well."
    assert not has_repetition(diagnosis.summary)


def test_free_text_caps_are_sized_to_the_field() -> None:
    properties = schemas.SocraticTurn.model_json_schema()["properties"]
    assert properties["question"]["maxLength"] == 200
    assert properties["concept"]["maxLength"] == 80
    with pytest.raises(ValueError, match="at most 200 characters"):
        schemas.CalibrationAdvice.model_validate(
            {"brier": 0.1, "ece": 0.1, "bias": 0.1, "advice": "x" * 201}
        )


@pytest.mark.parametrize("name", [d.name for d in default_registry().get_all()])
def test_examples_name_no_real_learner(name: str) -> None:
    registry = default_registry()
    rendered = registry.prompts.render_for(registry.get(name))
    examples = rendered.partition("Worked examples")[2]
    assert not REAL_LEARNERS.search(examples), REAL_LEARNERS.search(examples)


def test_the_react_prompt_holds_nothing_to_copy_as_an_answer() -> None:
    text = REACT.render(
        agent_name="a",
        goal="g",
        step_number=1,
        step_count=1,
        step="s",
        results="",
        tools="",
        hints="",
        extra="",
    )
    assert "Final Answer: <" not in text and "Thought: <" not in text
    assert "<" not in OBSERVATION_NUDGE


def test_one_tool_pattern_is_shown_picked_by_the_request() -> None:
    @tool
    def python_executor(code: str) -> str:
        """Run code."""
        return code

    both = ["search", python_executor.name]
    assert react_hints(["bash"], "What is 17 times 23?") == ""
    sums = react_hints(both, "What is 17 times 23?")
    assert '{"code": "print(X * Y)"}' in sums and "Action: python_executor" in sums
    assert "search" not in sums  # the model follows the last pattern it reads
    assert not re.search(r"\d", sums)  # letters, never figures a model could copy
    lookup = react_hints(both, "Look up the greenhouse 3: what is it?")  # a name, not a sum
    assert '{"query": "greenhouse 3"}' in lookup  # the request's own words, no placeholder
    assert "python_executor" not in lookup
    assert "Action: search" in react_hints(["search"], "What is 17 times 23?")  # its only tool
    assert "Action: python_executor" in react_hints([python_executor.name], "Look up X")


def test_what_counts_as_a_sum_and_the_query_words() -> None:
    sums = ["What is 7 factorial?", "What is 1234 plus 5678?", "3.5 * 12", "45, 67 and 89"]
    names = ["Look up the item K-77: what is it?", "Look up the greenhouse 3", "Who founded it?"]
    assert all(is_arithmetic(q) for q in sums)
    assert not any(is_arithmetic(q) for q in names)
    assert key_words("Look up the library closes: what is it?") == "library closes"
