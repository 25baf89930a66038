from __future__ import annotations

import gc
import json
import math
import random
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from noema_graph.models import compact_messages, context, count_tokens, make_model
from noema_graph.models.context import (
    REMOVED_OBSERVATION,
    TRUNCATED_KEEP_CHARS,
    estimate_tokens,
    message_tokens,
)

LONG = "x" * 4000


def chars(messages: Sequence[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def call(call_id: str) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "search", "args": {"q": call_id}, "id": call_id}]
    )


def conversation() -> list[BaseMessage]:
    return [
        SystemMessage(content="You are an agent."),
        HumanMessage(content="first question"),
        call("a"),
        ToolMessage(content=LONG, tool_call_id="a"),
        AIMessage(content="an older plain answer " * 20),
        call("b"),
        ToolMessage(content=LONG, tool_call_id="b"),
        HumanMessage(content="last question"),
        call("c"),
        ToolMessage(content=LONG, tool_call_id="c"),
    ]


def test_estimate_is_about_four_chars_per_token() -> None:
    assert estimate_tokens([HumanMessage(content="x" * 400)]) == 104


def test_count_tokens_never_uses_tiktoken_for_openai() -> None:
    model = make_model("openai:gpt-4o", env={"OPENAI_API_KEY": "sk-test"})
    messages = [HumanMessage(content="hello " * 100)]
    assert count_tokens(messages, model) == estimate_tokens(messages)


def test_count_tokens_uses_a_model_counter_that_works_offline() -> None:
    class Counting(GenericFakeChatModel):
        def get_num_tokens_from_messages(
            self, messages: list[BaseMessage], tools: object = None
        ) -> int:
            return 7 * len(messages)

    model = Counting(messages=iter([]))
    assert count_tokens([HumanMessage(content="a"), HumanMessage(content="b")], model) == 14


def test_count_tokens_without_model_estimates() -> None:
    assert count_tokens([HumanMessage(content="abcd")]) == 5


def test_under_budget_returns_input_unchanged() -> None:
    messages = conversation()
    result = compact_messages(messages, budget_tokens=10**6, count=chars)
    assert list(result.messages) == messages
    assert (result.removed_count, result.truncated_count) == (0, 0)
    assert result.before_tokens == result.after_tokens


def test_truncates_oldest_observations_first() -> None:
    messages = conversation()
    budget = chars(messages) - 3000
    result = compact_messages(messages, budget_tokens=budget, count=chars)
    assert result.truncated_count == 1
    assert result.after_tokens <= budget < result.before_tokens
    assert len(result.messages[3].text) < 300
    assert "truncated" in result.messages[3].text
    assert result.messages[6].text == LONG
    assert messages[3].text == LONG  # the input is not mutated


def test_keeps_protected_messages_verbatim() -> None:
    messages = conversation()
    # a budget that fits once the older observations are gone: the latest step stays whole
    budget = chars(messages) - 2 * len(LONG) + 100
    out = compact_messages(messages, budget_tokens=budget, count=chars).messages
    assert out[0] == messages[0]
    assert any(m == messages[7] for m in out)  # last human
    assert out[-2:] == tuple(messages[-2:])  # latest AI call and its result
    assert out[-1].text == LONG
    # an impossible budget: as a last resort the latest observation is cut, never dropped
    squeezed = compact_messages(messages, budget_tokens=1, count=chars).messages
    assert squeezed[0] == messages[0] and squeezed[-2] == messages[-2]
    assert len(squeezed[-1].text) < len(LONG) or len(LONG) <= 2 * TRUNCATED_KEEP_CHARS


def test_replaces_observations_when_truncation_is_not_enough() -> None:
    messages = conversation()
    budget = chars(messages) - 2 * len(LONG) + 100
    result = compact_messages(messages, budget_tokens=budget, count=chars)
    texts = [m.text for m in result.messages if isinstance(m, ToolMessage)]
    assert REMOVED_OBSERVATION in texts
    assert result.truncated_count == 2
    assert result.removed_count == 0


def test_never_drops_a_tool_message_and_answers_every_call() -> None:
    messages = conversation()
    result = compact_messages(messages, budget_tokens=1, count=chars)
    tool_ids = [m.tool_call_id for m in result.messages if isinstance(m, ToolMessage)]
    assert tool_ids == ["a", "b", "c"]
    for message in result.messages:
        if isinstance(message, AIMessage):
            assert {c["id"] for c in message.tool_calls} <= set(tool_ids)
    assert result.after_tokens > 1  # best effort: reports it still does not fit


def test_drops_old_plain_messages_last() -> None:
    messages = conversation()
    result = compact_messages(messages, budget_tokens=1, count=chars)
    assert result.removed_count == 2  # "first question" and the older plain answer
    assert messages[1] not in result.messages
    assert messages[4] not in result.messages


def test_latest_observation_is_halved_when_nothing_else_fits() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from noema_graph.models.context import compact_messages, estimate_tokens

    ai = AIMessage(content="", tool_calls=[{"name": "dump", "args": {}, "id": "d1"}])
    prompt = [
        SystemMessage("s"),
        HumanMessage("q"),
        ai,
        ToolMessage("x" * 40_000, tool_call_id="d1"),
        ToolMessage("y" * 300, tool_call_id="d0"),
    ]
    result = compact_messages(prompt, budget_tokens=2_000, count=estimate_tokens)
    assert result.after_tokens <= 2_000
    assert "characters truncated" in result.messages[3].text
    assert len(result.messages) == len(prompt)  # nothing dropped, every call still answered
    tiny = compact_messages(prompt, budget_tokens=10, count=estimate_tokens)  # cannot fit
    assert tiny.after_tokens > 10  # gives up instead of looping forever


# --- counting is cached: the same numbers as measuring every message, at O(new) cost ---


def reference_tokens(messages: Sequence[BaseMessage]) -> int:
    """The estimate as it was before caching, verbatim: every message measured every time."""
    total = 0
    for message in messages:
        size = len(message.text)
        if isinstance(message, AIMessage) and message.tool_calls:
            size += sum(
                len(c["name"]) + len(json.dumps(c["args"], default=str)) for c in message.tool_calls
            )
        total += math.ceil(size / 4) + 4
    return total


def varied() -> list[BaseMessage]:
    return [
        SystemMessage(content="You are an agent."),
        HumanMessage(content=""),
        HumanMessage(content=[{"type": "text", "text": "look at "}, "this", {"type": "image"}]),
        AIMessage(content="plain answer é" * 7),
        AIMessage(
            content=[{"type": "text", "text": "thinking"}, {"type": "tool_use", "id": "t"}],
            tool_calls=[
                {
                    "name": "write",
                    "args": {"path": Path("/tmp/a b"), "when": date(2025, 1, 2)},
                    "id": "t",
                },
                {"name": "calc", "args": {"xs": [1, 2.5, None], "nested": {"k": "ü"}}, "id": "u"},
            ],
        ),
        ToolMessage(content=[{"type": "text", "text": "rows: 3"}], tool_call_id="t"),
        ToolMessage(content="y" * 1001, tool_call_id="u"),
        ChatMessage(content="custom role", role="critic"),
        AIMessage(content="", tool_calls=[{"name": "noop", "args": {}, "id": "v"}]),
    ]


def test_cached_counts_equal_uncached_counts_on_varied_messages() -> None:
    messages = varied()
    assert estimate_tokens(messages) == reference_tokens(messages)
    assert estimate_tokens(messages) == reference_tokens(messages)  # from the caches
    for message in messages:
        assert message_tokens(message) == reference_tokens([message])
    shuffled = random.Random(3).sample(messages, len(messages))
    assert estimate_tokens(shuffled) == reference_tokens(shuffled)


def test_counts_follow_a_prompt_through_replacements_removals_and_appends() -> None:
    prompt = varied()
    assert estimate_tokens(prompt) == reference_tokens(prompt)
    prompt[6] = prompt[6].model_copy(update={"content": "short now"})  # same anchor prompt[1]
    assert estimate_tokens(prompt) == reference_tokens(prompt)
    del prompt[3]  # everything after it shifts by one position
    assert estimate_tokens(prompt) == reference_tokens(prompt)
    prompt[0] = SystemMessage(content="a new system prompt, as at every step")
    prompt += [AIMessage(content="", tool_calls=[{"name": "x", "args": {"a": 1}, "id": "w"}])]
    assert estimate_tokens(prompt) == reference_tokens(prompt)
    assert estimate_tokens(prompt[:2]) == reference_tokens(prompt[:2])  # a shorter prompt
    assert estimate_tokens(prompt[:1]) == reference_tokens(prompt[:1])
    assert estimate_tokens([]) == 0


def record_measures(monkeypatch: pytest.MonkeyPatch) -> list[BaseMessage]:
    """Record every message the counter really measures (serialises)."""
    measured: list[BaseMessage] = []
    measure = context._measure

    def recording(message: BaseMessage) -> int:
        measured.append(message)
        return measure(message)

    monkeypatch.setattr(context, "_measure", recording)
    return measured


def test_a_run_measures_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    measured = record_measures(monkeypatch)
    history: list[BaseMessage] = [HumanMessage(content="do it")]
    for step in range(200):  # what fit_context sees: a fresh system prompt, the whole history
        prompt = [SystemMessage(content=f"step {step}"), *history]
        assert count_tokens(prompt) == reference_tokens(prompt)
        history += [call(f"c{step}"), ToolMessage(content=LONG, tool_call_id=f"c{step}")]
    assert len(measured) == 199  # each tool call measured once (plain text costs a len)
    assert len({id(m) for m in measured}) == 199


def test_compaction_measures_each_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    measured = record_measures(monkeypatch)
    prompt: list[BaseMessage] = [SystemMessage(content="s")]
    for i in range(30):
        prompt += [HumanMessage(content="old " * 50), call(f"k{i}")]
        prompt += [ToolMessage(content=LONG, tool_call_id=f"k{i}")]
    result = compact_messages(prompt, budget_tokens=1, count=estimate_tokens)
    assert result.removed_count == 29  # removals shift every later message's position
    assert result.after_tokens == reference_tokens(result.messages)
    assert len(measured) == len({id(m) for m in measured}) == 30


def test_fit_context_counts_as_before() -> None:
    from noema_graph.nodes.compaction import fit_context

    deps: Any = SimpleNamespace(profile=SimpleNamespace(context_window=4096), model=None)
    small = conversation()[:3]
    assert fit_context(small, deps) == (small, None)
    compacted, record = fit_context(conversation(), deps)
    assert record is not None
    assert record.before_tokens == reference_tokens(conversation())
    assert record.after_tokens == reference_tokens(compacted) <= 4096 - 1024


def test_caches_do_not_keep_messages_alive() -> None:
    import weakref

    messages = [call(f"gc{i}") for i in range(50)]
    estimate_tokens([SystemMessage(content="s"), *messages])
    ids = {id(m) for m in messages}
    assert ids <= set(context._measured)
    alive = [weakref.ref(m) for m in messages]
    for i in range(context.PROMPT_MEMO_SIZE + 1):  # pushes that prompt out of the memo
        estimate_tokens([SystemMessage(content="s"), HumanMessage(content=str(i))])
    del messages
    gc.collect()
    # other tests' messages may still be cached; these 50 must be gone, and their entries too
    assert all(ref() is None for ref in alive)
    assert not any(key in ids and entry[0]() is None for key, entry in context._measured.items()), (
        "a dead message's entry stayed in the cache"
    )
    assert len(context._prompts) <= context.PROMPT_MEMO_SIZE


def test_compaction_with_the_estimate_recounts_only_what_it_changes() -> None:
    calls: list[int] = []

    def whole(messages: Sequence[BaseMessage]) -> int:  # a counter that is not the estimate
        calls.append(len(messages))
        return estimate_tokens(messages)

    prompt: list[BaseMessage] = [SystemMessage(content="s")]
    for i in range(40):
        prompt += [HumanMessage(content="old " * 50), call(f"r{i}")]
        prompt += [ToolMessage(content=LONG, tool_call_id=f"r{i}")]
    for budget in (1, 5_000, 20_000):
        fast = compact_messages(prompt, budget_tokens=budget, count=estimate_tokens)
        calls.clear()
        slow = compact_messages(prompt, budget_tokens=budget, count=whole)
        assert [m.text for m in fast.messages] == [m.text for m in slow.messages]
        assert fast.after_tokens == slow.after_tokens == estimate_tokens(fast.messages)
        assert (fast.removed_count, fast.truncated_count) == (
            slow.removed_count,
            slow.truncated_count,
        )
        assert len(calls) > 2  # the other counter is asked after every change


def test_compaction_reuses_each_shortened_observation_as_the_run_grows() -> None:
    prompt: list[BaseMessage] = [SystemMessage(content="s"), HumanMessage(content="q")]
    for i in range(30):
        prompt += [call(f"g{i}"), ToolMessage(content=LONG, tool_call_id=f"g{i}")]
    first = compact_messages(prompt, budget_tokens=10_000, count=estimate_tokens)
    grown = [*prompt, call("next"), ToolMessage(content=LONG, tool_call_id="next")]
    second = compact_messages(grown, budget_tokens=10_000, count=estimate_tokens)
    shortened = [i for i, m in enumerate(first.messages) if m is not prompt[i]]
    assert shortened and second.truncated_count > first.truncated_count
    # the same copy each step (not a new one per prompt), equal to a fresh shortening
    assert all(second.messages[i] is first.messages[i] for i in shortened)
    assert all(first.messages[i].text.startswith("x" * TRUNCATED_KEEP_CHARS) for i in shortened)
    assert second.after_tokens == estimate_tokens(second.messages) <= 10_000
    assert all(m is prompt[i] for i, m in enumerate(second.messages[:2]))


def test_shortened_copies_die_with_their_messages() -> None:
    import weakref

    prompt: list[BaseMessage] = [SystemMessage(content="s"), HumanMessage(content="q")]
    for i in range(10):
        prompt += [call(f"d{i}"), ToolMessage(content=LONG, tool_call_id=f"d{i}")]
    compacted = compact_messages(prompt, budget_tokens=200, count=estimate_tokens)
    assert compacted.truncated_count > 0
    alive = [weakref.ref(m) for m in (*prompt, *compacted.messages)]
    del prompt, compacted
    for i in range(context.PROMPT_MEMO_SIZE + 1):  # pushes the prompt out of the count's memo
        estimate_tokens([SystemMessage(content="s"), HumanMessage(content=str(i))])
    gc.collect()
    assert all(ref() is None for ref in alive)
