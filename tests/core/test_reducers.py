"""Reducers: each is pure and batching-invariant where DeltaChannel needs it."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from noema_graph.state.models import ReasoningStep, Usage
from noema_graph.state.reducers import add_seconds, add_usage, append_steps, merge_messages


def test_merge_messages_appends_and_replaces_by_id() -> None:
    first = [HumanMessage("a", id="1")]
    merged = merge_messages(first, [[AIMessage("b", id="2")], [AIMessage("B", id="2")]])
    assert [m.content for m in merged] == ["a", "B"]
    assert first == [HumanMessage("a", id="1")]  # input untouched


def test_merge_messages_is_batching_invariant() -> None:
    xs = [[HumanMessage("a", id="1")], [AIMessage("b", id="2")]]
    ys = [[AIMessage("c", id="3")], [AIMessage("B", id="2")]]
    assert merge_messages(merge_messages([], xs), ys) == merge_messages([], xs + ys)


def test_append_steps_numbers_by_position() -> None:
    steps = append_steps(
        [], [[ReasoningStep(thought="a")], [ReasoningStep(thought="b"), ReasoningStep(thought="c")]]
    )
    assert [(s.step, s.thought) for s in steps] == [(1, "a"), (2, "b"), (3, "c")]
    xs = [[ReasoningStep(thought="a")]]
    ys = [[ReasoningStep(thought="b")]]
    assert [s.step for s in append_steps(append_steps([], xs), ys)] == [
        s.step for s in append_steps([], xs + ys)
    ]


def test_add_usage_sums_and_unknown_cost_stays_unknown() -> None:
    total = add_usage(
        None, Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3, cost_usd=0.1)
    )
    total = add_usage(total, Usage(prompt_tokens=1, total_tokens=1, cost_usd=0.2))
    assert (total.prompt_tokens, total.total_tokens) == (2, 4)
    assert total.cost_usd is not None and abs(total.cost_usd - 0.3) < 1e-9
    assert add_usage(total, Usage(cost_usd=None)).cost_usd is None
    assert add_usage(total, None) == total


def test_add_seconds() -> None:
    assert add_seconds(None, 1.5) == 1.5
    assert add_seconds(1.0, None) == 1.0


def test_merge_messages_gives_stable_ids_to_id_less_messages() -> None:
    writes = [[("user", "hi")], [AIMessage("a")]]
    first, second = merge_messages([], writes), merge_messages([], writes)
    assert [m.id for m in first] == [m.id for m in second]
    assert all(m.id for m in first)
    same_text_later = merge_messages(first, [[("user", "hi")]])
    assert len({m.id for m in same_text_later}) == 3  # same content, another position
