"""KeepRaw: the include_raw mapping of structured output, without thread pools."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel

from noema_graph.models.keep_raw import KeepRaw, keep_raw
from tests.scripted import ScriptedChatModel, structured


class Answer(BaseModel):
    value: int


def _pair(*replies: AIMessage) -> tuple[Any, Any]:
    """Return (KeepRaw over one scripted model, include_raw=True over another)."""
    ours = keep_raw(ScriptedChatModel(script=list(replies)).with_structured_output(Answer))
    theirs = ScriptedChatModel(script=list(replies)).with_structured_output(
        Answer, include_raw=True
    )
    assert isinstance(ours, KeepRaw)
    return ours, theirs


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert ours["parsed"] == theirs["parsed"]
    assert type(ours["parsing_error"]) is type(theirs["parsing_error"])
    assert ours["raw"].tool_calls == theirs["raw"].tool_calls


def test_valid_answer_matches_include_raw() -> None:
    ours, theirs = _pair(structured("Answer", value=5))
    prompt = [HumanMessage("five?")]
    mine, reference = ours.invoke(prompt), theirs.invoke(prompt)
    assert mine["parsed"] == Answer(value=5) and mine["parsing_error"] is None
    assert mine["raw"].usage_metadata["total_tokens"] == 15
    _same(mine, reference)


def test_invalid_answer_is_returned_as_the_error_not_raised() -> None:
    ours, theirs = _pair(structured("Answer", value="many"))
    prompt = [HumanMessage("five?")]
    mine, reference = ours.invoke(prompt), theirs.invoke(prompt)
    assert mine["parsed"] is None and mine["parsing_error"] is not None
    _same(mine, reference)


async def test_async_path_gives_the_same_mapping() -> None:
    ours, _ = _pair(structured("Answer", value=7))
    mine = await ours.ainvoke([HumanMessage("seven?")])
    assert mine["parsed"] == Answer(value=7)


def test_blocking_call_starts_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    ours, theirs = _pair(structured("Answer", value=5), structured("Answer", value=5))
    started: list[str] = []
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    ours.invoke([HumanMessage("five?")])
    assert started == []
    theirs.invoke([HumanMessage("five?")])  # the check can fail: LangChain's path does start one
    assert started


def test_other_shapes_are_left_alone() -> None:
    model = ScriptedChatModel(script=[])
    assert keep_raw(model) is None
    assert keep_raw(model.with_structured_output(Answer, include_raw=True)) is None
