"""fold_items: a running fold over a trace resumes where it stopped (counts, no timing)."""

from __future__ import annotations

import copy

from noema_graph.state.models import ReasoningStep
from noema_graph.state.reducers import History, append_steps, fold_items


def thought(text: str) -> ReasoningStep:
    return ReasoningStep(kind="thought", thought=text)


class Counter:
    """A fold that records every item it was given."""

    def __init__(self) -> None:
        self.added: list[str] = []

    def add(self, into: list[str], step: ReasoningStep) -> None:
        self.added.append(step.thought or "")
        into.append(step.thought or "")

    def fold(self, items: list[ReasoningStep]) -> list[str]:
        return fold_items(items, "texts", list[str], self.add, list)


def test_each_step_is_folded_once_however_often_the_growing_trace_is_read() -> None:
    counter = Counter()
    trace = append_steps(None, [])
    for i in range(50):
        trace = append_steps(trace, [[thought(f"t{i}")]])
        assert counter.fold(trace) == [f"t{j}" for j in range(i + 1)]
        assert counter.fold(trace) == [f"t{j}" for j in range(i + 1)]  # read twice
    assert len(counter.added) == 50  # linear: one add per step, not one per step per read


def test_two_traces_grown_from_one_do_not_see_each_others_steps() -> None:
    counter = Counter()
    base = append_steps(None, [[thought("a")]])
    counter.fold(base)
    left = append_steps(base, [[thought("left")]])
    right = append_steps(copy.copy(base), [[thought("right")]])
    assert counter.fold(left) == ["a", "left"]
    assert counter.fold(right) == ["a", "right"]
    assert counter.fold(left) == ["a", "left"]
    assert counter.fold(base) == ["a"]  # a snapshot is never changed by a later fold
    assert counter.added == ["a", "left", "right"]


def test_a_plain_list_or_a_trace_changed_in_place_is_folded_from_the_start() -> None:
    counter = Counter()
    steps = [thought("x"), thought("y")]
    assert counter.fold(steps) == ["x", "y"]
    assert counter.fold(steps) == ["x", "y"]
    assert counter.added == ["x", "y", "x", "y"]
    trace = append_steps(None, [steps])
    counter.fold(trace)
    trace[1] = thought("z")  # same length, another last item: the snapshot does not apply
    assert counter.fold(trace) == ["x", "z"]


def test_a_pickled_trace_keeps_its_steps_not_its_snapshots() -> None:
    trace = append_steps(None, [[thought("x")]])
    Counter().fold(trace)
    again = copy.deepcopy(trace)
    assert isinstance(again, History) and list(again) == list(trace) and again.folds == {}


def test_a_message_history_keeps_its_folds_while_writes_only_append() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

    from noema_graph.nodes.llm import used_call_ids
    from noema_graph.nodes.routing import latest_human_text
    from noema_graph.state.reducers import merge_messages

    history = merge_messages(None, [[HumanMessage("first", id="h1")]])
    assert latest_human_text(history) == "first"
    call = AIMessage("", id="a1", tool_calls=[{"name": "t", "args": {}, "id": "c1"}])
    history = merge_messages(history, [[call]])
    assert used_call_ids(history) == {"c1"} and latest_human_text(history) == "first"
    grown = merge_messages(history, [[HumanMessage("second", id="h2")]])
    assert isinstance(grown, History) and grown.folds is history.folds
    assert latest_human_text(grown) == "second" and latest_human_text(history) == "first"
    removed = merge_messages(grown, [[RemoveMessage(id="h2")]])
    assert removed.folds is not grown.folds  # a removal starts the folds afresh
    assert latest_human_text(removed) == "first"
    assert used_call_ids(removed) == {"c1"}


def test_a_fold_resumes_on_the_copy_langgraph_applies_the_same_writes_to() -> None:
    counter = Counter()
    trace = append_steps(None, [[thought("a")]])
    for i in range(20):
        write = [thought(f"t{i}")]
        routed = append_steps(copy.copy(trace), [write])  # the copy a router reads
        trace = append_steps(trace, [write])  # the channel itself: equal, not the same, steps
        assert routed[-1] is not trace[-1] and routed[-1] == trace[-1]
        assert counter.fold(routed) == counter.fold(trace)
    assert len(counter.added) == 21  # each step once, whichever history was read first
