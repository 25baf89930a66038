"""A question to an agent with no tool that only reads is answered by a dry run.

Issue 33 item 1: a question never writes; an agent whose tools all write (governance) has
nothing to answer it from, so its likeliest change runs dry (``intent="uncertain"``, the
same path as an unclear request) and the answer says what it would change. An agent with
a tool that only reads answers the same question read-only. The decision is scripted; the
references are read from the sample store.
"""

from __future__ import annotations

from noema_graph.agents.domain_tools import domain_registry
from noema_graph.agents.intent import QUESTION, IntentClassifier, IntentDecision
from noema_graph.agents.reader import AgentReader
from noema_graph.agents.references import StoreNames
from noema_graph.grounding.reading import may_preview, may_write
from noema_graph.noema import DemoSummary


class _Question(IntentClassifier):
    """Decides every request is a question, the flag scoring above the sweep."""

    def __init__(self) -> None:
        """No examples: the decision is fixed."""

    def decide(self, request: str) -> IntentDecision:
        scores = {QUESTION: 0.86, "flag_card": 0.83, "flag_quality_issues": 0.81}
        return IntentDecision(QUESTION, 0.03, scores)


def _reader(demo: DemoSummary, tools: list[str]) -> AgentReader:
    domain = domain_registry(demo.path, tools)
    langchain_tools = domain.as_langchain_tools()
    return AgentReader(
        "governance", "Flag cards.", langchain_tools, StoreNames(demo.path), _Question()
    )


def test_a_question_to_an_agent_that_only_writes_runs_its_likeliest_change_dry(
    demo: DemoSummary,
) -> None:
    reading = _reader(demo, ["flag_quality_issues", "flag_card"])(
        "Does card 12 look like a duplicate to you?"
    )
    assert (reading.intent, reading.writes) == ("uncertain", ("flag_card",))
    assert [(r.kind, r.value) for r in reading.references] == [("card", 12)]
    assert may_preview(reading, "flag_card") and not may_write(reading, "flag_card")
    assert reading.note is not None and "asks a question" in reading.note


def test_the_same_question_to_an_agent_that_can_read_stays_read_only(demo: DemoSummary) -> None:
    reading = _reader(demo, ["get_card", "flag_card"])("Does card 12 look like a duplicate to you?")
    assert reading.intent == "question" and reading.writes == ()
    assert not may_preview(reading, "flag_card") and not may_write(reading, "flag_card")
